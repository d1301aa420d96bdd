"""Inherited methods run on the analysed file's classes (`engine/inherited.py`): a base class's method that calls a
method the subclass overrides runs with the override, and a second backward there through a graph the override's
backward freed is reported on the override's backward (GS402), in the subclass's file."""

import subprocess
import sys

from gradsight.analysis import RULES, analyze_source
from gradsight.engine.engine import Engine
from gradsight.engine.workspace import Workspace

BASE = ("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(3, 1)\n"
        "        self.optimizer = torch.optim.SGD(self.fc.parameters(), lr=0.1)\n\n"
        "    def train_model(self, x, epochs):\n        for _ in range(epochs):\n"
        "            loss = self._compute_loss(x)\n            self.optimizer.zero_grad()\n"
        "            loss.backward()\n            self.optimizer.step()\n\n"
        "    def _compute_loss(self, x):\n        return self.fc(x).pow(2).mean()\n")

SUB = ("import torch\nfrom pkg.base_model import Model\n\n\nclass Bayes(Model):\n    def _compute_loss(self, x):\n"
       "        loss = self.fc(x).pow(2).mean()\n        self.optimizer.zero_grad()\n        loss.backward()\n"
       "        self.optimizer.step()\n        return loss\n")

# The fix: the override computes the loss and leaves backward and step to the base class.
SUB_FIXED = ("import torch\nfrom pkg.base_model import Model\n\n\nclass Bayes(Model):\n"
             "    def _compute_loss(self, x):\n        loss = self.fc(x).pow(2).mean()\n        return loss\n")

# The override backwards a loss it does not hand back: the base class's loss is a new one.
SUB_OTHER = ("import torch\nfrom pkg.base_model import Model\n\n\nclass Bayes(Model):\n"
             "    def _compute_loss(self, x):\n        aux = self.fc(x).abs().mean()\n        aux.backward()\n"
             "        return self.fc(x).pow(2).mean()\n")

# With `retain_graph=True` the base class's backward goes through a kept graph.
SUB_RETAIN = SUB.replace("loss.backward()", "loss.backward(retain_graph=True)")

RUN = "import torch\nfrom pkg.sub import Bayes\n\nBayes().train_model(torch.ones(2, 3), 2)\n"


def _tree(tmp_path, sub):
    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "base_model.py").write_text(BASE)
    (tmp_path / "pkg" / "sub.py").write_text(sub)
    (tmp_path / "run.py").write_text(RUN)
    return tmp_path / "pkg" / "sub.py"


def _findings(tmp_path, sub):
    path = _tree(tmp_path, sub)
    return analyze_source(sub, str(path), workspace=Workspace(tmp_path)).findings


def _stderr(tmp_path) -> str:
    proc = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    return proc.stderr


def test_override_backward_then_base_backward_is_reported_on_the_override(tmp_path):
    found = _findings(tmp_path, SUB)
    assert [(f.code, f.line, f.severity.name) for f in found] == [("GS402", 9, "ERROR")]
    (rel,) = found[0].related
    assert rel.path.endswith("base_model.py") and rel.line == 15
    assert "second time" in _stderr(tmp_path)


def test_fixed_override_is_quiet(tmp_path):
    assert _findings(tmp_path, SUB_FIXED) == []
    assert "Error" not in _stderr(tmp_path)


def test_override_backwarding_another_loss_is_quiet(tmp_path):
    assert _findings(tmp_path, SUB_OTHER) == []
    assert "Error" not in _stderr(tmp_path)


def test_retained_graph_is_quiet(tmp_path):
    assert _findings(tmp_path, SUB_RETAIN) == []
    assert "Error" not in _stderr(tmp_path)


def test_warm_result_equals_cold(tmp_path):
    path = _tree(tmp_path, SUB)
    ws = Workspace(tmp_path)
    engine = Engine()
    first = engine.analyze(SUB, str(path), None, ws, rules=RULES)
    edited = SUB.replace("class Bayes(Model):\n", "class Bayes(Model):\n    # a comment\n")
    warm = engine.analyze(edited, str(path), None, ws, rules=RULES)
    cold = Engine().analyze(edited, str(path), None, ws, rules=RULES)
    assert [(f.code, f.line) for f in first.findings] == [("GS402", 9)]
    assert [(f.code, f.line, f.message) for f in warm.findings] == [(f.code, f.line, f.message) for f in cold.findings]
    assert [(f.code, f.line) for f in cold.findings] == [("GS402", 10)]
