"""The reverse direction across files for GS312: a base model's helper keeps `list(weight_list)`, written for
iterables of parameters; a subclass in another file hands it one `weight` (DeepCTR-Torch's
`add_regularization_weight(self.dnn_linear.weight, ...)`). The finding stands in the base file, on the `list(...)`
call, and names the subclass's call; the program run under torch raises."""

import subprocess
import sys

from gradsight.analysis import analyze_source
from gradsight.engine.workspace import Workspace

BASE = """import torch
import torch.nn as nn


class BaseModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 1)
        self.reg = []
        self.add_reg(self.linear.parameters(), 1e-3)

    def add_reg(self, weight_list, decay):
        self.reg.append((list(weight_list), decay))

    def reg_loss(self):
        total = 0.0
        for weights, decay in self.reg:
            for w in weights:
                w = w[1] if isinstance(w, tuple) else w
                total = total + decay * w.norm()
        return total
"""

FIXED = BASE.replace("        self.reg.append((list(weight_list), decay))\n",
                     "        if isinstance(weight_list, nn.Parameter):\n            weight_list = [weight_list]\n"
                     "        else:\n            weight_list = list(weight_list)\n"
                     "        self.reg.append((weight_list, decay))\n")

DEEP = """import torch.nn as nn

from .base import BaseModel


class Deep(BaseModel):
    def __init__(self):
        super().__init__()
        self.dnn = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.dnn_linear = nn.Linear(8, 1, bias=False)
        self.add_reg(filter(lambda x: "weight" in x[0], self.dnn.named_parameters()), 1e-3)
        self.add_reg(self.dnn_linear.weight, 1e-3)

    def forward(self, x):
        return self.linear(x) + self.dnn_linear(self.dnn(x))
"""

RUN = """import torch
from models.deep import Deep

model = Deep()
opt = torch.optim.Adam(model.parameters())
x, y = torch.randn(8, 4), torch.rand(8, 1)
for _ in range(3):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean() + model.reg_loss()
    loss.backward()
    opt.step()
"""


def make(tmp_path, base=BASE):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("")
    (tmp_path / "models" / "base.py").write_text(base)
    (tmp_path / "models" / "deep.py").write_text(DEEP)
    (tmp_path / "run.py").write_text(RUN)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    return str(tmp_path / "models" / "base.py")


def gs312(text, path, ws):
    return [f for f in analyze_source(text, path, workspace=ws).findings if f.code == "GS312"]


def test_subclass_in_other_file_passes_a_parameter(tmp_path):
    path = make(tmp_path)
    found = gs312(BASE, path, Workspace(tmp_path))
    assert [f.line for f in found] == [13], found
    assert found[0].severity.value == "warning"
    assert any("deep.py" in (n.path or "") for n in found[0].related), found[0].related
    proc = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "is a view and its base" in proc.stderr, proc.stderr[-2000:]


def test_fixed_helper_and_no_workspace_are_quiet(tmp_path):
    path = make(tmp_path, base=FIXED)
    assert gs312(FIXED, path, Workspace(tmp_path)) == []
    proc = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # Alone, the helper only ever gets parameters() from its own class: nothing to claim.
    assert gs312(BASE, path, None) == []
