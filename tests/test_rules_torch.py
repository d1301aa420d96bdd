"""Ground truth: every INVALID example really fails (or is silently wrong) under PyTorch, every VALID one runs."""

import json
import subprocess
import sys

import pytest

from gradsight.rules import all_rules

pytestmark = pytest.mark.torch

RUNNER = r"""
import json, sys, traceback, warnings
warnings.simplefilter("ignore")
cases = json.load(sys.stdin)
out = []
for code, probe in cases:
    if "torch" in sys.modules:
        # An example may switch grad mode off for the thread (`torch.set_grad_enabled(False)` as a statement): each
        # starts as a fresh interpreter would, with grad mode on.
        sys.modules["torch"].set_grad_enabled(True)
    ns = {"__name__": "__main__"}
    res = {"raised": None, "probe": None}
    try:
        exec(compile(code, "example.py", "exec"), ns)
    except BaseException as exc:
        res["raised"] = type(exc).__name__ + ": " + str(exc)
    if probe:
        try:
            res["probe"] = bool(eval(probe, ns))
        except Exception as exc:
            res["probe"] = "probe failed: " + repr(exc)
    out.append(res)
print("RESULT" + json.dumps(out))
"""


def _run(cases):
    proc = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(cases), capture_output=True, text=True,
                          timeout=300)
    line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT")]
    assert line, proc.stderr[-3000:]
    return json.loads(line[-1][len("RESULT"):])


@pytest.fixture(scope="module")
def results():
    cases = []
    for rule in all_rules():
        for inv in rule.invalid:
            probe = inv.runtime[len("silent: "):] if inv.runtime.startswith("silent: ") else None
            cases.append(("invalid", rule.code, inv, inv.code, probe))
        for v in rule.valid:
            cases.append(("valid", rule.code, v, v.code, None))
    got = _run([(c[3], c[4]) for c in cases])
    return list(zip(cases, got))


def test_invalid_examples_fail_under_torch(results):
    problems = []
    for (kind, code, example, _, probe), res in results:
        if kind != "invalid":
            continue
        if example.runtime.startswith("raises: "):
            want = example.runtime[len("raises: "):]
            if not res["raised"] or want not in res["raised"]:
                problems.append(f"{code}: expected a raise containing {want!r}, got {res['raised']!r}")
        else:
            if res["raised"]:
                problems.append(f"{code}: silent example raised {res['raised']}")
            elif res["probe"] is not True:
                problems.append(f"{code}: probe {probe!r} gave {res['probe']!r}")
    assert not problems, "\n".join(problems)


def test_valid_examples_run_cleanly(results):
    problems = [f"{code}: {res['raised']}" for (kind, code, *_), res in results if kind == "valid" and res["raised"]]
    assert not problems, "\n".join(problems)
