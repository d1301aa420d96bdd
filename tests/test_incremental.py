"""Re-analysis after an edit reuses per-function results; it must give exactly what a cold analysis gives."""

import importlib.util
import pathlib
import random

import pytest

from gradsight.engine import analyze_source, driver

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parent.parent / "docs" / "examples").glob("*.py"))
SEEDS = sorted((pathlib.Path(__file__).resolve().parent / "fixtures" / "seed_cases").glob("*.py"))


def torch_files():
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return []
    root = pathlib.Path(spec.origin).parent
    return [root / "nn" / "modules" / n for n in ("activation.py", "rnn.py", "transformer.py")]


def snapshot(a):
    return ([f.to_json() for f in a.findings],
            [(f.line, f.column, f.end_line, f.end_column, f.summary, f.label, f.transition) for f in a.facts])


def edits(text: str, rng: random.Random, n: int = 6):
    lines = text.splitlines(keepends=True)
    for _ in range(n):
        i = rng.randrange(len(lines))
        changed = list(lines)
        choice = rng.randrange(3)
        if choice == 0:
            changed[i] = changed[i].replace("(", "( ", 1)
        elif choice == 1:
            changed.insert(i, changed[i])  # duplicate a line
        else:
            del changed[i]
        yield "".join(changed)


@pytest.mark.parametrize("path", EXAMPLES + SEEDS + torch_files(), ids=lambda p: p.name)
def test_warm_equals_cold(path):
    text = path.read_text()
    rng = random.Random(path.name)
    analyze_source(text, str(path))  # fill the per-definition cache
    for edited in edits(text, rng):
        warm = snapshot(analyze_source(edited, str(path)))
        driver._DEF_CACHE.clear()
        cold = snapshot(analyze_source(edited, str(path)))
        assert warm == cold
        analyze_source(text, str(path))


def test_edit_in_helper_changes_caller_result():
    base = ("import torch\n\n\ndef helper(t):\n    return t * 2\n\n\ndef train():\n"
            "    x = torch.randn(3, requires_grad=True)\n    loss = helper(x).sum()\n    loss.backward()\n")
    assert not analyze_source(base, "h.py").findings
    cut = base.replace("return t * 2", "return t.detach() * 2")
    assert [f.code for f in analyze_source(cut, "h.py").findings if f.severity.rank >= 2] == ["GS401"]


def test_decorator_change_is_seen():
    base = ("import torch\n\n\n@torch.no_grad()\ndef f():\n    x = torch.randn(3, requires_grad=True)\n"
            "    loss = (x * 2).sum()\n    loss.backward()\n")
    assert [f.code for f in analyze_source(base, "d.py").findings] == ["GS401"]
    assert not analyze_source(base.replace("@torch.no_grad()", "@torch.enable_grad()"), "d.py").findings


def test_methods_of_one_class_are_analysed_separately():
    """Regression: methods of one class reach the same definitions; each still gets its own analysis."""
    src = ("import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
           "        super().__init__()\n        self.fc = nn.Linear(2, 2)\n\n    def a(self, x):\n"
           "        g = torch.sigmoid(self.fc(x))\n        g *= 2\n        return g\n\n    def b(self, x):\n"
           "        h = torch.exp(self.fc(x))\n        h += 1\n        return h\n")
    driver._DEF_CACHE.clear()
    lines = sorted(f.line for f in analyze_source(src, "m.py").findings if f.code == "GS301")
    assert lines == [12, 17]
