"""Keystroke speed without changing results (docs/performance.md, "Ninth session of 2026-11-26"): module-level code
whose values hold another workspace file's classes or functions is cached like any other (it was run again on every
analysis once re-exports resolved), and answers about unchanged top-level statements are kept across analyses.
Warm results must still equal cold ones when the other file changes."""

import pathlib

from gradsight import analysis
from gradsight.engine.engine import Engine
from gradsight.engine.workspace import Workspace

LAYERS = ("import torch\nimport torch.nn as nn\n\n\nclass Gate(nn.Module):\n    def __init__(self):\n"
          "        super().__init__()\n        self.fc = nn.Linear(2, 2)\n\n    def forward(self, x):\n"
          "        return torch.sigmoid(self.fc(x))\n")
MAIN = ("import torch\nfrom pkg import Gate\n\nLAYERS = {'gate': Gate, 'other': Gate}\nLAYER = Gate\n"
        "CFGS = {'a': dict(url='x', n=3)}\n\n\ndef train():\n    layer = LAYER()\n    y = layer(torch.randn(3, 2))\n    y.mul_(2)\n"
        "    y.sum().backward()\n\n\ndef other():\n    return 1\n")


def project(tmp_path: pathlib.Path) -> pathlib.Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .layers import Gate\n")  # a re-export
    (tmp_path / "pkg" / "layers.py").write_text(LAYERS)
    return tmp_path / "train.py"


def results(a) -> list:
    return [f.to_json() for f in a.findings], sorted(a.dependencies)


def test_module_values_holding_another_files_class_are_reused(tmp_path):
    path = project(tmp_path)
    ws = Workspace(tmp_path)
    e = Engine()
    first = e.analyze(MAIN, str(path), workspace=ws, rules=analysis.RULES)
    assert [f.code for f in first.findings] == ["GS301"]  # the in-place write on Gate's sigmoid output
    edited = MAIN.replace("return 1", "return 2")  # a function body: module-level code is unchanged
    warm = e.analyze(edited, str(path), workspace=ws, rules=analysis.RULES)
    assert e.stats["module_reused"] == 1
    assert results(warm) == results(Engine().analyze(edited, str(path), workspace=ws, rules=analysis.RULES))
    # Shifted by a line above everything (the values are position-free: the result is moved, not run again).
    shifted = "\n" + edited
    warm = e.analyze(shifted, str(path), workspace=ws, rules=analysis.RULES)
    assert e.stats["module_reused"] == 2
    assert results(warm) == results(Engine().analyze(shifted, str(path), workspace=ws, rules=analysis.RULES))


def test_module_values_follow_the_other_file(tmp_path):
    """The class's file changes (its output no longer saved by sigmoid): the cached module-level values are not
    reused, and warm results equal cold ones."""
    path = project(tmp_path)
    ws = Workspace(tmp_path)
    e = Engine()
    e.analyze(MAIN, str(path), workspace=ws, rules=analysis.RULES)
    (tmp_path / "pkg" / "layers.py").write_text(LAYERS.replace("torch.sigmoid(self.fc(x))", "self.fc(x) * 1.0"))
    warm = e.analyze(MAIN, str(path), workspace=ws, rules=analysis.RULES)
    assert e.stats["module_reused"] == 0
    cold = Engine().analyze(MAIN, str(path), workspace=Workspace(tmp_path), rules=analysis.RULES)
    assert results(warm) == results(cold)
    assert "GS301" not in [f.code for f in warm.findings]


def test_module_values_follow_an_edit_of_the_data(tmp_path):
    """Editing the module-level data itself (a new shape) runs module-level code again: a result that depends on
    the data changes with it."""
    path = project(tmp_path)
    ws = Workspace(tmp_path)
    e = Engine()
    e.analyze(MAIN, str(path), workspace=ws, rules=analysis.RULES)
    for edited in (MAIN.replace("LAYER = Gate", "LAYER = torch.nn.Identity"),
                   MAIN.replace("n=3", "n=4"), MAIN):
        warm = e.analyze(edited, str(path), workspace=ws, rules=analysis.RULES)
        assert results(warm) == results(Engine().analyze(edited, str(path), workspace=ws, rules=analysis.RULES))
    assert "GS301" not in [f.code for f in e.analyze(MAIN.replace("LAYER = Gate", "LAYER = torch.nn.Identity"),
                                                     str(path), workspace=ws, rules=analysis.RULES).findings]


def test_attribute_stores_are_seen_after_an_edit_elsewhere():
    """`_module_mutations` is kept per top-level statement across analyses: an attribute stored outside `__init__`
    in a statement the edit did not touch still makes a loop's test variant (warm equals cold)."""
    src = ("import torch\n\n\nclass Box:\n    def __init__(self):\n        self.mode = 'a'\n\n    def flip(self):\n"
           "        self.mode = 'b'\n\n\ndef train(box, model, xs):\n    for x in xs:\n        if box.mode == 'a':\n"
           "            loss = model(x).sum()\n        box.flip()\n        loss.backward()\n\n\ndef other():\n"
           "    return 1\n")
    e = Engine()
    e.analyze(src, "/speed/mut.py", rules=analysis.RULES)
    for edited in (src.replace("return 1", "return 2"), src.replace("self.mode = 'b'", "pass"), src):
        warm = e.analyze(edited, "/speed/mut.py", rules=analysis.RULES)
        cold = Engine().analyze(edited, "/speed/mut.py", rules=analysis.RULES)
        assert [f.to_json() for f in warm.findings] == [f.to_json() for f in cold.findings]


def test_attribute_stores_on_a_shared_line():
    """Two top-level statements on one line share the digest of their lines: each keeps its own answer."""
    src = ("import torch\n\n\nclass Box:\n    def __init__(self):\n        self.mode = 'a'\n\n\nbox = Box(); box.mode = 'b'\n"
           "\n\ndef train(model, xs):\n    for x in xs:\n        if box.mode == 'a':\n            loss = model(x).sum()\n"
           "        loss.backward()\n\n\ndef other():\n    return 1\n")
    e = Engine()
    for edited in (src, "\n" + src, src.replace("return 1", "return 2"), src.replace("box.mode = 'b'", "pass")):
        warm = e.analyze(edited, "/speed/shared_line.py", rules=analysis.RULES)
        cold = Engine().analyze(edited, "/speed/shared_line.py", rules=analysis.RULES)
        assert [f.to_json() for f in warm.findings] == [f.to_json() for f in cold.findings]
