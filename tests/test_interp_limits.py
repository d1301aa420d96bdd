"""Limits of the abstract interpreter: deeply nested loops cost work linear in the nesting, stay sound, and do
not invent findings. (Assertions are on behaviour and on counts of executed blocks, never on wall time.)

Python's tokenizer accepts at most 100 levels of indentation, so 98 loops inside one function is the deepest
nesting a file can have."""

import ast

import pytest

from gradsight import analysis
from gradsight.analysis import analyze_source
from gradsight.engine import interp as interp_mod

DEEPEST = 98


def _nested(n: int, body: list[str], per_level: list[str] = ()) -> str:
    lines = ["import torch", "", "", "def f(xs):", "    w = torch.randn(3, requires_grad=True)",
             "    h = torch.zeros(3)", "    total = 0.0"]
    ind = "    "
    for i in range(n):
        lines.append(f"{ind}for i{i} in xs:")
        ind += "    "
        lines.extend(ind + s.format(i=i) for s in per_level)
    lines.extend(ind + s for s in body)
    return "\n".join(lines) + "\n"


@pytest.fixture
def blocks(monkeypatch):
    """Counts `exec_block` calls (one per executed block of statements) and deep-loop passes."""
    counts = {"blocks": 0, "deep": 0}
    orig_block = interp_mod.Interpreter.exec_block
    orig_deep = interp_mod.Interpreter.deep_loop

    def exec_block(self, stmts, state):
        counts["blocks"] += 1
        return orig_block(self, stmts, state)

    def deep_loop(self, *args):
        counts["deep"] += 1
        return orig_deep(self, *args)

    monkeypatch.setattr(interp_mod.Interpreter, "exec_block", exec_block)
    monkeypatch.setattr(interp_mod.Interpreter, "deep_loop", deep_loop)
    return counts


def _analyse(text: str, name: str):
    analysis.ENGINE.units.clear()
    return analyze_source(text, f"/limits/{name}.py")


def _work(blocks, text: str, name: str) -> int:
    blocks["blocks"] = blocks["deep"] = 0
    result = _analyse(text, name)
    assert not result.problems, result.problems
    return blocks["blocks"]


def test_deepest_nesting_parses_and_analyses(blocks):
    text = _nested(DEEPEST, ["loss = (w * i%d).sum()" % (DEEPEST - 1), "loss.backward()"])
    ast.parse(text)
    result = _analyse(text, "deepest")
    assert not result.problems
    assert result.findings == []
    assert blocks["deep"] > 0


def test_work_grows_linearly_with_nesting(blocks):
    # A value carried through every level (`h = h * w + i`) makes each fixpoint take several rounds; iterating
    # nested fixpoints would cost rounds ** depth.
    per_level = ["h = h * w + i{i}", "total += float(h.sum())"]
    body = ["loss = (w * h).sum()", "loss.backward()"]
    w24 = _work(blocks, _nested(24, body, per_level), "w24")
    w48 = _work(blocks, _nested(48, body, per_level), "w48")
    w96 = _work(blocks, _nested(96, body, per_level), "w96")
    # Linear: doubling the depth about doubles the work (quadratic would give 4x, exponential far more).
    assert w48 <= 2.5 * w24
    assert w96 <= 2.5 * w48


def test_shallow_nesting_keeps_the_fixpoint(blocks):
    # Up to MAX_LOOP_NESTING loops deep the loop fixpoint runs as before: nothing is widened.
    text = _nested(interp_mod.MAX_LOOP_NESTING, ["loss = (w * xs).sum()", "loss.backward()"])
    _analyse(text, "shallow")
    assert blocks["deep"] == 0


def test_bug_inside_a_deep_loop_is_still_found():
    body = ["v = torch.randn(3, requires_grad=True)", "loss = (v * 2).exp().sum()", "loss.backward()",
            "loss.backward()"]
    result = _analyse(_nested(30, body), "deep_bug")
    assert [f.code for f in result.findings] == ["GS402"]
    assert result.findings[0].line == 7 + 30 + 4  # the second backward


def test_deep_loop_widening_invents_nothing():
    # Correct code that carries a detached state and a float total through 60 levels: no finding may appear.
    per_level = ["h = (h + w * i{i}).detach()", "total += float(h.sum())"]
    body = ["loss = (w * h).sum()", "loss.backward()", "with torch.no_grad():", "    w -= 0.1 * w.grad",
            "w.grad.zero_()"]
    result = _analyse(_nested(60, body, per_level), "deep_ok")
    assert not result.problems
    assert [f for f in result.findings if f.severity.rank >= 2] == []


def test_deep_loop_carried_graph_stays_silent_not_wrong():
    # Beyond the nesting limit a value carried across iterations is UNKNOWN: the carried graph (a real bug, the
    # second round's backward raises) is not reported, and nothing else is reported instead.
    per_level = []
    body = ["h = h * w", "loss = h.sum()", "loss.backward()"]
    result = _analyse(_nested(interp_mod.MAX_LOOP_NESTING + 3, body, per_level), "deep_carry")
    assert all(f.code == "GS402" for f in result.findings)
