"""Cross-file shape: a module method that only its own `__init__` calls (Div99/XQL's `LinearEnsemble.reset_parameters`,
bench/fresh29-false/01). `reset_parameters` initialises the plain tensor `__init__` made with in-place ops, on the
views `for w in self.weight` gives, and only then wraps it: `self.weight = nn.Parameter(self.weight)`. The method is
analysed where `__init__` calls it, not on the built layer, whose later Parameter is not what the loop sees; mlp.py
builds and trains the layers without calling it again. The twin whose trainer calls `reset_parameters()` on a built
layer is reported (through the reverse direction) and raises under torch.
"""

import subprocess
import sys

import pytest

from gradsight.analysis import analyze_source
from gradsight.engine.workspace import Workspace

COMMON = """import math

import torch
from torch import nn


class LinearEnsemble(nn.Module):
    def __init__(self, in_features, out_features, ensemble_size=2):
        super().__init__()
        self.ensemble_size = ensemble_size
        self.weight = torch.empty((ensemble_size, in_features, out_features))
        self.bias = torch.empty((ensemble_size, 1, out_features))
        self.reset_parameters()

    def reset_parameters(self):
        for w in self.weight:
            w.transpose_(0, 1)
            nn.init.kaiming_uniform_(w, a=math.sqrt(5))
            w.transpose_(0, 1)
        self.weight = nn.Parameter(self.weight)
        bound = 1 / math.sqrt(self.weight.shape[1])
        nn.init.uniform_(self.bias, -bound, bound)
        self.bias = nn.Parameter(self.bias)

    def forward(self, input):
        if len(input.shape) == 2:
            input = input.repeat(self.ensemble_size, 1, 1)
        return torch.baddbmm(self.bias, input, self.weight)
"""

MLP = """import torch
from torch import nn

from nets.common import LinearEnsemble


def train(steps=3):
    net = nn.Sequential(LinearEnsemble(7, 16), nn.ReLU(), LinearEnsemble(16, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for _ in range(steps):
        loss = net(torch.randn(5, 7)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return net


if __name__ == "__main__":
    train()
"""

# The twin: a caller resets a built layer, a second call of the method on the Parameter.
RESET = MLP.replace("    return net\n", "    net[0].reset_parameters()\n    return net\n")


def make(tmp_path, mlp=MLP):
    (tmp_path / "nets").mkdir(exist_ok=True)
    (tmp_path / "nets" / "__init__.py").write_text("")
    (tmp_path / "nets" / "common.py").write_text(COMMON)
    (tmp_path / "nets" / "mlp.py").write_text(mlp)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    return str(tmp_path / "nets" / "common.py")


def gs302(path, ws, text=COMMON):
    return sorted(f.line for f in analyze_source(text, path, workspace=ws).findings if f.code == "GS302")


def test_a_method_only_init_calls_runs_on_the_plain_tensor(tmp_path):
    path = make(tmp_path)
    assert gs302(path, Workspace(tmp_path)) == []
    assert gs302(path, None) == []


def test_a_caller_in_another_file_resetting_the_built_layer(tmp_path):
    path = make(tmp_path, mlp=RESET)
    assert gs302(path, Workspace(tmp_path)) == [17, 19]


def test_a_call_elsewhere_in_the_file_runs_it_on_the_built_layer(tmp_path):
    text = COMMON + "\n\nlayer = LinearEnsemble(3, 2)\nlayer.reset_parameters()\n"
    path = make(tmp_path)
    assert gs302(path, None, text) == [17, 19]


@pytest.mark.torch
def test_the_projects_behave_as_claimed_under_torch(tmp_path):
    pytest.importorskip("torch")
    for name, mlp in (("good", MLP), ("bad", RESET)):
        (tmp_path / name).mkdir()
        make(tmp_path / name, mlp=mlp)
    good = subprocess.run([sys.executable, "-m", "nets.mlp"], cwd=tmp_path / "good", capture_output=True, text=True,
                          timeout=300)
    assert good.returncode == 0, good.stderr[-2000:]
    bad = subprocess.run([sys.executable, "-m", "nets.mlp"], cwd=tmp_path / "bad", capture_output=True, text=True,
                         timeout=300)
    assert "is being modified inplace" in bad.stderr, bad.stderr[-2000:]
