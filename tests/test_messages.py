"""Short messages: the first sentence of every finding (what is wrong and what happens) fits the Problems panel.

Provenance and PyTorch's exact error text belong in `related`, the hover and the rule page. The limit is checked
on every rule's INVALID examples, the messages users see most.
"""

import re

import pytest

from gradsight.analysis import analyze_source
from gradsight.rules import all_rules

LIMIT = 110
CASES = [(r, i, inv) for r in all_rules() for i, inv in enumerate(r.invalid)]


def first_sentence(message: str) -> str:
    """Up to the first '. ', '; ' or the end; dots inside backticks (`x.grad`) and quotes do not end it."""
    text = re.sub(r"`[^`]*`", lambda m: "X" * len(m.group(0)), message)
    text = re.sub(r'"[^"]*"', lambda m: "X" * len(m.group(0)), text)
    ends = [m.start() + 1 for m in re.finditer(r"[.;](\s|$)", text)]
    return message[:ends[0]] if ends else message


def test_first_sentence_helper():
    assert first_sentence("`x.grad` is None. More text.") == "`x.grad` is None."
    assert first_sentence("It raises \"a. b\"; do this.") == "It raises \"a. b\";"


@pytest.mark.parametrize("rule,idx,example", CASES, ids=[f"{r.code}-invalid-{i}" for r, i, _ in CASES])
def test_first_sentence_is_short(rule, idx, example):
    findings = [f for f in analyze_source(example.code, "example.py").findings
                if f.code == rule.code and f.line == example.line]
    assert findings, f"{rule.code} did not flag its INVALID example {idx}"
    for f in findings:
        head = first_sentence(f.message)
        assert len(head) <= LIMIT, f"{rule.code}: {len(head)} characters: {head}"
