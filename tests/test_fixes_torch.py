"""Fixes you can trust, proven under real PyTorch.

For every rule and every INVALID example, each fix gradsight offers (safe or unsafe) is applied on its own
and the fixed program is run under torch beside the original:

- the problem is gone: a "raises: ..." example no longer raises that error, a "silent: <probe>" example no
  longer makes the probe true;
- a SAFE fix keeps the program's values: every tensor that a torch function returned while the original
  ran (up to where it raised) is returned, with the same values, in the same order, by the fixed program.
  Both runs start from the same seeds. Calls that only re-wrap a value (`detach`, `clone`, ...) are left out
  of the comparison, since adding `.detach()` is the whole point of some fixes.

A fix that cannot pass the second check must be marked unsafe, with its rule's "Fix safety" saying how it
changes behaviour.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from gradsight.analysis import analyze_source
from gradsight.findings import Applicability
from gradsight.fixes import apply_edits
from gradsight.rules import all_rules

pytestmark = pytest.mark.torch

RUNNER = r"""
import json, random, sys, warnings
warnings.simplefilter("ignore")
import torch
from torch.overrides import TorchFunctionMode

SKIP = {"empty", "empty_like", "empty_strided", "new_empty", "detach", "detach_", "clone", "contiguous", "numpy", "item", "tolist", "requires_grad_", "__get__",
        "__repr__", "__format__", "size", "dim", "numel", "__len__", "__bool__", "__index__", "__int__", "__float__"}

class Record(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.values = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", str(func))
        if name not in SKIP and len(self.values) < 400:
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for o in outs:
                if isinstance(o, torch.Tensor) and o.is_floating_point() and o.numel() <= 4096 \
                        and not o.is_meta and o.layout == torch.strided:
                    with torch._C.DisableTorchFunction():
                        self.values.append([round(float(v), 5) for v in o.detach().reshape(-1).tolist()])
        return out

out = []
for code, probe in json.load(sys.stdin):
    random.seed(0)
    torch.manual_seed(0)
    ns = {"__name__": "__main__"}
    res = {"raised": None, "probe": None, "values": []}
    rec = Record()
    try:
        with rec:
            exec(compile(code, "example.py", "exec"), ns)
    except BaseException as exc:
        res["raised"] = type(exc).__name__ + ": " + str(exc)
    res["values"] = rec.values
    if probe:
        try:
            res["probe"] = bool(eval(probe, ns))
        except Exception as exc:
            res["probe"] = "probe failed: " + repr(exc)
    out.append(res)
print("RESULT" + json.dumps(out))
"""


def _run(cases: list[tuple[str, str | None]]) -> list[dict]:
    proc = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(cases), capture_output=True, text=True,
                          timeout=600)
    line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT")]
    assert line, proc.stderr[-3000:]
    return json.loads(line[-1][len("RESULT"):])


def _fix_jobs() -> list[tuple[str, int, str, object, str]]:
    """(rule code, example index, applicability, fixed text, runtime) for every fix on every INVALID example."""
    jobs = []
    for rule in all_rules():
        for i, inv in enumerate(rule.invalid):
            analysis = analyze_source(inv.code, "example.py")
            for finding in analysis.findings:
                if finding.code != rule.code or finding.fix is None:
                    continue
                if finding.fix.applicability is Applicability.DISPLAY_ONLY:
                    continue
                fixed, _ = apply_edits(inv.code, finding.fix.edits)
                jobs.append((rule.code, i, finding.fix.applicability.value, fixed, inv.runtime))
    return jobs


def _same_prefix(before: list, after: list) -> bool:
    if len(after) < len(before):
        return False
    for a, b in zip(before, after):
        if len(a) != len(b) or any(not math.isclose(x, y, rel_tol=1e-4, abs_tol=1e-5) for x, y in zip(a, b)):
            return False
    return True


@pytest.fixture(scope="module")
def fix_results():
    jobs = _fix_jobs()
    cases = []
    for code, i, _, fixed, runtime in jobs:
        rule = next(r for r in all_rules() if r.code == code)
        probe = runtime[len("silent: "):] if runtime.startswith("silent: ") else None
        cases.append((rule.invalid[i].code, probe))
        cases.append((fixed, probe))
    got = _run(cases)
    return [(job, got[2 * k], got[2 * k + 1]) for k, job in enumerate(jobs)]


def test_every_fixing_rule_is_covered(fix_results):
    """Each rule that claims a fix (derived from its examples) has at least one fix exercised here."""
    covered = {job[0] for job, _, _ in fix_results}
    claimed = {r.code for r in all_rules() if r.can_fix()}
    assert claimed <= covered, f"rules whose fixes never ran: {sorted(claimed - covered)}"


def test_fixes_remove_the_problem(fix_results):
    problems = []
    for (code, i, applicability, fixed, runtime), before, after in fix_results:
        where = f"{code} invalid[{i}] ({applicability} fix)"
        if runtime.startswith("raises: "):
            wanted = runtime[len("raises: "):]
            assert before["raised"] and wanted in before["raised"], f"{where}: the original did not raise {wanted!r}"
            if after["raised"]:
                problems.append(f"{where}: the fixed program raises {after['raised']!r}\n{fixed}")
        else:
            assert before["probe"] is True, f"{where}: the original's probe is {before['probe']!r}"
            if after["raised"]:
                problems.append(f"{where}: the fixed program raises {after['raised']!r}\n{fixed}")
            elif after["probe"] is True:
                problems.append(f"{where}: the fixed program still shows the problem\n{fixed}")
    assert not problems, "\n\n".join(problems)


def test_safe_fixes_keep_the_values(fix_results):
    problems = []
    for (code, i, applicability, fixed, _), before, after in fix_results:
        if applicability != "safe":
            continue
        if not before["values"]:
            problems.append(f"{code} invalid[{i}]: the original computed no tensor to compare")
        elif not _same_prefix(before["values"], after["values"]):
            problems.append(f"{code} invalid[{i}]: the safe fix changed the values the program computes\n{fixed}")
    assert not problems, "\n\n".join(problems)


def test_the_value_check_catches_a_dropped_operation():
    """The comparison itself must fail when a fix drops an op (the old `F.relu(t, inplace=False)` bug)."""
    original = ("import torch\nimport torch.nn.functional as F\nw = torch.randn(4, requires_grad=True)\n"
                "t = torch.sigmoid(w) - 0.5\nF.relu(t, inplace=True)\ny = t * 2\n")
    dropped = original.replace("inplace=True", "inplace=False")
    before, after = _run([(original, None), (dropped, None)])
    assert not _same_prefix(before["values"], after["values"])


def test_a_second_check_is_not_clean_when_a_fixed_program_fails(fix_results):
    """After `--fix`, `gradsight check` must not say all is well if the fix broke the program: every fixed
    program that raises under torch gets a warning or an error again."""
    quiet_failures = []
    for (code, i, applicability, fixed, _), _, after in fix_results:
        if not after["raised"]:
            continue
        findings = [f for f in analyze_source(fixed, "example.py").findings if f.severity.rank >= 2]
        if not findings:
            quiet_failures.append(f"{code} invalid[{i}] ({applicability}): raises {after['raised']!r}, check is quiet")
    assert not quiet_failures, "\n".join(quiet_failures)


@pytest.mark.parametrize("statement", ["torch = torch.relu(t)", "F = F.relu(t)"])
def test_the_old_broken_relu_fixes_are_reported_on_a_second_check(statement):
    """What the old GS301 fix wrote for `torch.relu_(t)` / `F.relu_(t)` inside a function raises
    UnboundLocalError under torch, and a second check reports it (GS002) instead of passing."""
    program = ("import torch\nimport torch.nn.functional as F\n\n\ndef step(w):\n    t = torch.sigmoid(w) - 0.5\n"
               f"    {statement}\n    return t * 2\n\n\nw = torch.randn(4, requires_grad=True)\nstep(w).sum().backward()\n")
    (result,) = _run([(program, None)])
    assert result["raised"] and "UnboundLocalError" in result["raised"]
    codes = {(f.code, f.line) for f in analyze_source(program, "example.py").findings}
    assert ("GS002", 7) in codes
