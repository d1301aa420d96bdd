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
