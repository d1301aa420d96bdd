"""Run scripts under real PyTorch, all in one child process (one torch import), and report what happened.

Used by every test that checks ground truth: the seed cases, the recall corpus, the truth page.
"""

from __future__ import annotations

import json
import subprocess
import sys

RUNNER = r"""
import contextlib, io, json, sys, traceback, warnings
warnings.simplefilter("ignore")
out = []
for path, probe in json.load(sys.stdin):
    if "torch" in sys.modules:
        # A script may switch grad mode off for the thread (`torch.set_grad_enabled(False)` as a statement): each
        # starts as a fresh interpreter would, with grad mode on.
        sys.modules["torch"].set_grad_enabled(True)
    res = {"raised": None, "type": None, "message": None, "line": None, "probe": None}
    ns = {"__name__": "__main__", "__file__": path}
    try:
        with open(path, encoding="utf-8") as fh:
            code = compile(fh.read(), path, "exec")
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, ns)
    except BaseException as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
        res["raised"] = type(exc).__name__ + ": " + str(exc)
        res["type"], res["message"] = type(exc).__name__, str(exc)
        res["line"] = frames[-1].lineno if frames else None
    if probe:
        try:
            res["probe"] = bool(eval(probe, ns))
        except Exception as exc:
            res["probe"] = "probe failed: " + repr(exc)
    out.append(res)
print("RESULT" + json.dumps(out))
"""


def run_scripts(jobs: list[tuple[str, str | None]], cwd: str | None = None, timeout: float = 600) -> list[dict]:
    """jobs: (path, probe expression or None). Returns one dict per job: raised ("Type: message"), type,
    message, line (of the raise in that file), probe (True/False, or "probe failed: ...")."""
    proc = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(jobs), capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT")]
    if not lines:
        raise AssertionError(f"the torch runner printed no result:\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT"):])
