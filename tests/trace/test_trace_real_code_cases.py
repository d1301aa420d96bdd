"""Issue 14's done-when over the copy of ../shared/real-code-cases in tests/real_code_cases/ (with its
truth.json): every case that raises or misbehaves when run gets a trace finding on one of its `must_flag`
lines (the root cause), and no clean case gets a trace finding of warning or error.

Single-file cases are traced in one batch with `cases/` as the working directory (as verify_runtime.py runs
them); a folder case runs its entry script in its own process with the folder as the working directory
(two folders hold a `metrics.py` each, which one shared interpreter would confuse).

The silent cases listed in KNOWN_MISSES are bugs the trace does not see yet; they are expected failures with
the reason, so that a fix shows up as XPASS.
"""

from __future__ import annotations

import json
import pathlib
from concurrent.futures import ThreadPoolExecutor

import pytest

from trace_helpers import RANK

ROOT = pathlib.Path(__file__).resolve().parent.parent / "real_code_cases"  # shared with tests/test_real_code_cases.py
CASES = json.loads((ROOT / "truth.json").read_text(encoding="utf-8"))
ENTRIES = ("train.py", "resolve.py", "basics.py")
KNOWN_MISSES = {
}

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def traces():
    pytest.importorskip("torch")
    from gradsight.trace import run_trace, run_traces

    singles = [c for c in CASES if c["file"].endswith(".py")]
    folders = [c for c in CASES if not c["file"].endswith(".py")]
    out = dict(zip((c["file"] for c in singles),
                   run_traces([str(ROOT / c["file"]) for c in singles], device="cpu", timeout=300,
                              cwd=str(ROOT / "cases"))))

    def one(case):
        folder = ROOT / case["file"]
        entry = next(folder / n for n in ENTRIES if (folder / n).exists())
        return case["file"], run_trace(str(entry), device="cpu", timeout=120, cwd=str(folder))

    with ThreadPoolExecutor(max_workers=2) as pool:
        out.update(dict(pool.map(one, folders)))
    return out


def _judge(case, result):
    problems = []
    flagged = set()
    for group in case["must_flag"]:
        need = RANK[group["min_severity"]]
        hit = [f for f in result["findings"] if f["line"] in group["lines"] and RANK[f["severity"]] >= need
               and ("path" not in group or f["path"].endswith("/" + group["path"]))]
        if not hit:
            problems.append(f"missed {group['lines']}")
        flagged.update(group["lines"])
    allowed = flagged | set(case["also_allowed_lines"])
    for f in result["findings"]:
        if RANK[f["severity"]] >= RANK["warning"] and f["line"] not in allowed:
            problems.append(f"false alarm {f['path'].rsplit('/', 1)[-1]}:{f['line']} {f['code']}")
    return problems


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c["file"].split("/")[-1],
                 marks=[pytest.mark.xfail(reason=KNOWN_MISSES[c["file"]], strict=False)] if c["file"] in KNOWN_MISSES
                 else []) for c in CASES])
def test_case(traces, case):
    result = traces[case["file"]]
    assert result["internal_errors"] == [], result["internal_errors"]
    assert _judge(case, result) == [], [(f["line"], f["code"], f["message"][:120]) for f in result["findings"]]
    if not case["must_flag"]:
        assert result["error"] is None, result["error"]
