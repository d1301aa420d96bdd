"""Re-analysis after an edit reuses per-function results; it must give exactly what a cold analysis gives."""

import importlib.util
import pathlib
import random

import pytest

from gradsight.analysis import analyze_source
from gradsight import analysis

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
        analysis.ENGINE.clear()
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
    analysis.ENGINE.units.clear()
    lines = sorted(f.line for f in analyze_source(src, "m.py").findings if f.code == "GS301")
    assert lines == [12, 17]


def warm_and_cold(before: str, after: str, path: str, workspace=None):
    """`after` analysed right after `before` (warm caches) and alone (every in-process cache emptied)."""
    full = lambda a: (snapshot(a), a.problems, sorted(a.dependencies))  # noqa: E731
    analyze_source(before, path, workspace=workspace)
    warm = full(analyze_source(after, path, workspace=workspace))
    analysis.ENGINE.clear()
    cold = full(analyze_source(after, path, workspace=workspace))
    return warm, cold


NET = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
       "        super().__init__()\n        self.fc = nn.Linear(2, 2)\n\n    def forward(self, x):\n"
       "        return self.fc(x)\n\n\n")


def test_edit_in_forward_reaches_callers_of_the_module():
    """Regression: `net(x)` runs `Net.forward` without naming it; a name-based key missed the edit."""
    before = NET + ("def train():\n    net = Net()\n    x = torch.randn(3, 2)\n    loss = net(x).sum()\n"
                    "    loss.backward()\n")
    after = before.replace("return self.fc(x)", "return self.fc(x).detach()")
    warm, cold = warm_and_cold(before, after, "fwd.py")
    assert warm == cold
    assert [f["code"] for f in warm[0][0]] == ["GS401"]


def test_edit_reaching_module_level_values():
    """A module-level `model = Net()` is used by a function: editing Net changes what the function sees."""
    before = NET + ("model = Net()\n\n\ndef train():\n    x = torch.randn(3, 2)\n    loss = model(x).sum()\n"
                    "    loss.backward()\n")
    for after in (before.replace("return self.fc(x)", "return self.fc(x).detach()"),
                  before.replace("class Net(nn.Module):", "class Net:")):
        warm, cold = warm_and_cold(before, after, "modlevel.py")
        assert warm == cold


def test_rule_reading_the_whole_file_is_not_cached_across_edits():
    """GS103 asks whether the *file* calls backward anywhere: an edit in another function changes its answer."""
    before = ("import torch\nimport torch.nn as nn\n\n\ndef evaluate():\n    model = nn.Linear(2, 2)\n"
              "    model.eval()\n    out = model(torch.randn(1, 2))\n    return out\n\n\n"
              "def other(loss):\n    return loss\n")
    after = before.replace("    return loss\n", "    loss.backward()\n")
    warm, cold = warm_and_cold(before, after, "evalonly.py")
    assert warm == cold
    assert "GS103" not in [f["code"] for f in warm[0][0]]
    warm, cold = warm_and_cold(after, before, "evalonly.py")
    assert warm == cold


def test_results_do_not_depend_on_analysis_order():
    """Each definition is analysed in isolation: state one function leaves (instances, optimizers) must not
    change another's results, or cached and fresh results would differ."""
    src = ("import torch\nimport torch.nn as nn\n\n\ndef a():\n    model = nn.Linear(2, 2)\n"
           "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    return opt\n\n\n"
           "def b():\n    model = nn.Linear(2, 2)\n    model.weight = nn.Parameter(torch.zeros(2, 2))\n"
           "    return model\n")
    for after in (src.replace("lr=0.1", "lr=0.2"), src.replace("zeros(2, 2)", "ones(2, 2)")):
        warm, cold = warm_and_cold(src, after, "order.py")
        assert warm == cold


def test_workspace_dependencies_survive_cached_definitions(tmp_path):
    from gradsight.engine.workspace import Workspace

    (tmp_path / "helpers.py").write_text("def double(t):\n    return t * 2\n")
    main = ("import torch\nfrom helpers import double\n\n\ndef train():\n    x = torch.randn(3, requires_grad=True)\n"
            "    loss = double(x).sum()\n    loss.backward()\n\n\ndef other():\n    return 1\n")
    path = str(tmp_path / "train.py")
    ws = Workspace(tmp_path)
    warm, cold = warm_and_cold(main, main.replace("return 1", "return 2"), path, workspace=ws)
    assert warm == cold
    assert any(p.endswith("helpers.py") for p in warm[2])


@pytest.mark.parametrize("path", EXAMPLES + SEEDS, ids=lambda p: p.name)
def test_same_line_count_edits_warm_equals_cold(path):
    """Edits that keep the number of lines take the incremental parse; results must still equal cold ones."""
    text = path.read_text()
    rng = random.Random("same-lines" + path.name)
    lines = text.split("\n")
    analyze_source(text, str(path))
    for _ in range(6):
        i = rng.randrange(len(lines))
        edited = list(lines)
        edited[i] = rng.choice([edited[i] + " ", edited[i].replace("(", "( ", 1), edited[i].replace(".detach()", ""),
                                edited[i].replace("no_grad", "enable_grad"), "# " + edited[i]])
        new = "\n".join(edited)
        warm = snapshot(analyze_source(new, str(path)))
        analysis.ENGINE.clear()
        assert warm == snapshot(analyze_source(new, str(path)))
        analyze_source(text, str(path))


MOVED = ("import torch\nimport torch.nn as nn\n\n\ndef helper(t):\n    return t * 2\n\n\ndef first():\n"
         "    x = torch.randn(3, requires_grad=True)\n    return helper(x)\n\n\n"
         "def train():\n    w = torch.randn(3, requires_grad=True)\n    y = w.exp()\n    y.add_(1)\n"
         "    z = torch.randn(3, requires_grad=True)\n    loss = (z * 2).sum()\n    loss.backward()\n"
         "    loss.backward()\n    n = torch.tensor(z)\n    return y, n\n\n\n"
         "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.act = nn.ReLU(inplace=True)\n        self.fc = nn.Linear(2, 2)\n\n"
         "    def forward(self, x):\n        h = torch.sigmoid(self.fc(x))\n        h *= 2\n        return self.act(h)\n")


@pytest.mark.parametrize("at", ["    x = torch.randn(3, requires_grad=True)\n", "def helper(t):\n",
                                "    return helper(x)\n", "import torch.nn as nn\n", "        super().__init__()\n"])
@pytest.mark.parametrize("edit", ["enter", "delete", "paste"])
def test_line_count_edit_moves_messages_with_line_numbers(at, edit):
    """Findings and hover facts whose messages name other lines ("… at line 16") are moved with their
    definitions, or analysed again; never left with old line numbers."""
    assert any("line" in f.message for f in analyze_source(MOVED, "moved.py").findings)
    if edit == "enter":
        after = MOVED.replace(at, at + "\n", 1)
    elif edit == "delete":
        after = MOVED.replace(at, "", 1) if at.startswith("import") else MOVED.replace(at, at + "    pass\n", 1)
    else:
        after = MOVED.replace(at, at + "    a = 1\n    b = 2\n    c = 3\n", 1) if at.startswith(" ") else \
            MOVED.replace(at, "# one\n# two\n" + at, 1)
    for before, text in ((MOVED, after), (after, MOVED)):
        warm, cold = warm_and_cold(before, text, "moved.py")
        assert warm == cold


def test_enter_above_definitions_reuses_their_results():
    before = MOVED
    analyze_source(before, "reuse.py")
    moved = analysis.ENGINE.stats["moved"]
    after = before.replace("def helper(t):\n", "\ndef helper(t):\n", 1)
    warm, cold = warm_and_cold(before, after, "reuse.py")
    assert warm == cold
    analyze_source(before, "reuse.py")
    analyze_source(after, "reuse.py")
    assert analysis.ENGINE.stats["moved"] > moved


@pytest.mark.parametrize("path", EXAMPLES + SEEDS + torch_files(), ids=lambda p: p.name)
def test_line_count_edits_warm_equals_cold(path):
    from test_speed_incremental_parse import line_edit

    text = path.read_text()
    rng = random.Random("enter-warm" + path.name)
    analyze_source(text, str(path))
    for _ in range(6):
        edited = line_edit(text, rng)
        warm = snapshot(analyze_source(edited, str(path)))
        analysis.ENGINE.clear()
        assert warm == snapshot(analyze_source(edited, str(path)))
        analyze_source(text, str(path))
        text = edited if rng.random() < 0.5 else text
        analyze_source(text, str(path))
