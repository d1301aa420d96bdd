"""Nested loop fixpoints on a long training script: an outer loop's next round starts its inner loops' iteration
from the fixpoint they reached before (`Interpreter.warm_start`), with results identical to iterating from the
entry alone. Assertions are on counts of executed blocks and on the findings and facts, never on wall time."""

import pathlib
import subprocess
import sys

import pytest

from gradsight import analysis
from gradsight.analysis import analyze_source
from gradsight.engine import interp as interp_mod

GEN = pathlib.Path(__file__).resolve().parent.parent / "bench" / "gen_rl_script.py"


@pytest.fixture(scope="module")
def script() -> str:
    return subprocess.run([sys.executable, str(GEN), "2"], check=True, capture_output=True, text=True).stdout


def _run(monkeypatch, text: str, warm: bool) -> tuple:
    counts = {"blocks": 0}
    orig_block = interp_mod.Interpreter.exec_block

    def exec_block(self, stmts, state):
        counts["blocks"] += 1
        return orig_block(self, stmts, state)

    with monkeypatch.context() as m:
        m.setattr(interp_mod.Interpreter, "exec_block", exec_block)
        if not warm:
            m.setattr(interp_mod.Interpreter, "warm_start", lambda self, key, entry: entry)
        analysis.ENGINE.units.clear()
        result = analyze_source(text, "/speed/rl_script.py")
    assert not result.problems, result.problems
    return counts["blocks"], [f.to_json() for f in result.findings], [repr(f) for f in result.facts]


def test_warm_start_runs_fewer_blocks_with_the_same_results(monkeypatch, script):
    cold_blocks, cold_findings, cold_facts = _run(monkeypatch, script, warm=False)
    warm_blocks, warm_findings, warm_facts = _run(monkeypatch, script, warm=True)
    assert warm_findings == cold_findings
    assert warm_facts == cold_facts
    assert warm_blocks < 0.95 * cold_blocks, (warm_blocks, cold_blocks)


def _run_spec(monkeypatch, text: str, speculate: bool, path: str = "/speed/rl_script.py") -> tuple:
    counts = {"stmts": 0, "tainted": 0, "kept": 0}
    orig_stmt = interp_mod.Interpreter.exec_stmt
    orig_drop = interp_mod.Interpreter.drop_spec
    orig_close = interp_mod.Interpreter.close_spec

    def exec_stmt(self, stmt, state):
        counts["stmts"] += 1
        return orig_stmt(self, stmt, state)

    def drop_spec(self, spec):
        counts["tainted"] += spec.tainted
        return orig_drop(self, spec)

    def close_spec(self, spec, first=None):
        counts["kept"] += 1
        return orig_close(self, spec, first)

    with monkeypatch.context() as m:
        m.setattr(interp_mod.Interpreter, "exec_stmt", exec_stmt)
        m.setattr(interp_mod.Interpreter, "drop_spec", drop_spec)
        m.setattr(interp_mod.Interpreter, "close_spec", close_spec)
        m.setattr(interp_mod.Interpreter, "speculative_reporting", speculate)
        analysis.ENGINE.units.clear()
        result = analyze_source(text, path)
    assert not result.problems, result.problems
    return counts, [f.to_json() for f in result.findings], [repr(f) for f in result.facts]


def test_reporting_pass_folded_into_the_confirming_round(monkeypatch, script):
    """A loop on the reporting pass runs its rounds after the first with reporting on, holding back what they
    report; the round that confirms the fixpoint is then the reporting pass (`speculate.py`): fewer statements run,
    the same findings and facts."""
    off, off_findings, off_facts = _run_spec(monkeypatch, script, speculate=False)
    on, on_findings, on_facts = _run_spec(monkeypatch, script, speculate=True)
    assert on_findings == off_findings
    assert on_facts == off_facts
    assert off["kept"] == 0 and on["kept"] > 0
    assert on["stmts"] < 0.9 * off["stmts"], (on, off)


BREAK_INSIDE = '''import torch
import torch.nn as nn


def train(batches, epochs):
    model = nn.Linear(4, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    h = None
    for epoch in range(epochs):
        for x in batches:
            out = model(x)
            if out.sum().item() > 0:
                h = out
                break
            h = None
        if h is not None:
            opt.zero_grad()
            h.sum().backward()
            opt.step()
        for x in batches:
            y = model(x)
            y.mul_(2)
    return h
'''


def test_round_tainted_by_an_inner_break_runs_again_without_reporting(monkeypatch):
    """An inner loop's exit joins its `break` states on the reporting pass only: a speculative round whose inner
    loop's exit changes that way is thrown away (with the fixpoints it stored) and run again without reporting, so
    the results are those of the separate reporting pass."""
    off, off_findings, off_facts = _run_spec(monkeypatch, BREAK_INSIDE, speculate=False, path="/speed/brk.py")
    on, on_findings, on_facts = _run_spec(monkeypatch, BREAK_INSIDE, speculate=True, path="/speed/brk.py")
    assert on["tainted"] >= 1
    assert on_findings == off_findings
    assert on_facts == off_facts
    assert on_facts
