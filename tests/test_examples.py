"""The bundled examples in docs/examples: what gradsight reports, and what PyTorch really does with them."""

import pathlib
import subprocess
import sys

import pytest

from gradsight.analysis import analyze_source

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "docs" / "examples"
# file -> (expected (code, line) findings of warning level or above, what running it does)
EXPECTED = {
    "train_loop.py": ({("GS404", 24), ("GS201", 27)}, "raises: Can't call numpy() on Tensor that requires grad"),
    "rnn_language_model.py": ({("GS402", 27)}, "raises: backward through the graph a second time"),
    "gan_step.py": ({("GS402", 30)}, "raises: backward through the graph a second time"),
    "gated_block.py": ({("GS301", 19)}, "raises: modified by an inplace operation"),
    "clean_training.py": (set(), "runs"),
}


def test_every_example_is_listed():
    assert {p.name for p in EXAMPLES.glob("*.py")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_findings(name):
    found = analyze_source((EXAMPLES / name).read_text(), name).findings
    loud = {(f.code, f.line) for f in found if f.severity.rank >= 2}
    assert loud == EXPECTED[name][0], found


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_runtime_truth(name):
    code = ("import runpy, sys\ntry:\n    runpy.run_path(sys.argv[1], run_name='__main__')\n"
            "except Exception as e:\n    print('RAISED', type(e).__name__, e)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(EXAMPLES / name)], capture_output=True, text=True,
                          timeout=300)
    want = EXPECTED[name][1]
    if want == "runs":
        assert "RAISED" not in proc.stdout and proc.returncode == 0, proc.stdout + proc.stderr
    else:
        assert "RAISED" in proc.stdout and want[len("raises: "):] in proc.stdout, proc.stdout + proc.stderr
