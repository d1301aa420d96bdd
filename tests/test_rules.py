"""Every rule's own VALID and INVALID examples, through the engine (Fixit-style self-tests)."""

import re

import pytest

from gradsight.analysis import analyze_source
from gradsight.findings import Severity
from gradsight.fixes import apply_fixes
from gradsight.rules import all_rules

RULES = all_rules()
INVALID = [(r, i, inv) for r in RULES for i, inv in enumerate(r.invalid)]
VALID = [(r, i, v) for r in RULES for i, v in enumerate(r.valid)]


@pytest.mark.parametrize("rule,idx,example", INVALID, ids=[f"{r.code}-invalid-{i}" for r, i, _ in INVALID])
def test_invalid_example_is_flagged(rule, idx, example):
    analysis = analyze_source(example.code, "example.py")
    hits = [f for f in analysis.findings if f.code == rule.code]
    assert hits, f"{rule.code} did not flag:\n{example.code}\nfindings: {analysis.findings}"
    assert any(f.line == example.line for f in hits), [(f.line, f.message) for f in hits]
    finding = next(f for f in hits if f.line == example.line)
    assert finding.name == rule.name
    assert finding.message.endswith(".") and len(finding.message) < 400
    if example.severity is not None:
        assert finding.severity == example.severity
    if example.fixed is not None:
        assert finding.fix is not None, f"{rule.code} offered no fix"
        fixed, count = apply_fixes(example.code, [finding], unsafe=True)
        assert count == 1
        assert fixed == example.fixed
        # The fix must make the problem go away.
        again = analyze_source(fixed, "example.py")
        assert not [f for f in again.findings if f.code == rule.code and f.line == example.line]
    # No other rule may raise a false alarm of warning level or above elsewhere on an INVALID example.
    others = [f for f in analysis.findings if f.code != rule.code and f.severity.rank >= Severity.WARNING.rank
              and f.code != "GS001" and f.line not in example.also]
    assert not others, others


@pytest.mark.parametrize("rule,idx,example", VALID, ids=[f"{r.code}-valid-{i}" for r, i, _ in VALID])
def test_valid_example_is_quiet(rule, idx, example):
    analysis = analyze_source(example.code, "example.py")
    loud = [f for f in analysis.findings if f.severity.rank >= Severity.WARNING.rank]
    assert not loud, loud
    assert not [f for f in analysis.findings if f.code == rule.code]


def test_registry_codes_and_names_are_unique_and_documented():
    codes = [r.code for r in RULES]
    names = [r.name for r in RULES]
    assert len(codes) == len(set(codes))
    assert len(names) == len(set(names))
    for r in RULES:
        assert re.fullmatch(r"GS\d{3}", r.code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name)
        for section in (r.summary, r.what_it_does, r.why_bad, r.example, r.use_instead, r.fix_safety):
            assert section.strip()
        assert r.invalid, f"{r.code} has no INVALID example"
        assert r.valid, f"{r.code} has no VALID example"
        assert all(inv.runtime.startswith(("raises: ", "silent: ")) for inv in r.invalid)


def test_can_fix_is_derived_from_examples():
    for r in RULES:
        assert r.can_fix() == any(inv.fixed for inv in r.invalid)


def test_gs202_reports_one_line_once():
    """`h.data / h.data.norm()` cuts the same parameters twice on one line: one report, not two."""
    code = ("import torch\nimport torch.nn as nn\nenc = nn.Linear(4, 4)\nhead = nn.Linear(4, 1)\n"
            "opt = torch.optim.SGD(list(enc.parameters()) + list(head.parameters()), lr=0.1)\n"
            "h = enc(torch.randn(2, 4))\nz = h.data / h.data.norm()\nhead(z).sum().backward()\n")
    found = [f for f in analyze_source(code, "example.py").findings if f.code == "GS202"]
    assert [f.line for f in found] == [7], found


def test_dict_and_function_loss_accumulators():
    code = ("import torch\n\n\ndef fit(model, loader, opt, crit, stats):\n    total = 0.0\n"
            "    for x, y in loader:\n        loss = crit(model(x), y)\n        opt.zero_grad()\n"
            "        loss.backward()\n        opt.step()\n        total += loss\n        stats[x.dtype] += loss\n"
            "        stats['n'] = stats.get('n', 0) + loss\n    return total\n")
    found = sorted(f.line for f in analyze_source(code, "example.py").findings if f.code == "GS404")
    assert found == [11, 12, 13], found
