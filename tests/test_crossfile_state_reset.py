"""Cross-file shape: a recurrent state kept on the module (`out, self.hidden = self.lstm(x, self.hidden)`, GS413) that
every caller resets in another file (kaushalshetty/Structured-Self-Attention, bench/fresh25-false/06). model.py
defines the module; run.py imports it, builds the model and hands it to train.py's `train`, which stores
`model.hidden = model.init_hidden()` before each forward. The one-file rule reads a store outside the class as a
reset; the same store in the files around the module's callers (an importer, or a file an importer imports) counts
the same way. The twin without the reset is reported and raises under torch.
"""

import subprocess
import sys

import pytest

from gradsight.analysis import analyze_source
from gradsight.engine.workspace import Workspace

MODEL = """import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, batch_size=2):
        super().__init__()
        self.batch_size = batch_size
        self.lstm = nn.LSTM(3, 4, batch_first=True)
        self.linear = nn.Linear(4, 1)
        self.hidden = self.init_hidden()

    def init_hidden(self):
        return (torch.zeros(1, self.batch_size, 4), torch.zeros(1, self.batch_size, 4))

    def forward(self, x):
        out, self.hidden = self.lstm(x, self.hidden)
        return self.linear(out[:, -1, :])
"""

TRAIN = """import torch


def train(model, batches, opt):
    for x, y in batches:
        model.hidden = model.init_hidden()
        loss = ((model(x).squeeze(1) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()
"""

RUN = """import torch

from tagger.model import Tagger
from tagger.train import train

model = Tagger()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(2, 5, 3), torch.randn(2)) for _ in range(3)]
print(train(model, batches, opt))
"""

NO_RESET = TRAIN.replace("        model.hidden = model.init_hidden()\n", "")


def make(tmp_path, train=TRAIN, run=RUN):
    (tmp_path / "tagger").mkdir(exist_ok=True)
    (tmp_path / "tagger" / "__init__.py").write_text("")
    (tmp_path / "tagger" / "model.py").write_text(MODEL)
    (tmp_path / "tagger" / "train.py").write_text(train)
    (tmp_path / "run.py").write_text(run)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    return str(tmp_path / "tagger" / "model.py")


def gs413(path, ws):
    return [f.line for f in analyze_source(MODEL, path, workspace=ws).findings if f.code == "GS413"]


def test_state_reset_by_the_helper_an_importer_hands_the_model_to(tmp_path):
    path = make(tmp_path)
    ws = Workspace(tmp_path)
    assert gs413(path, ws) == []
    analysis = analyze_source(MODEL, path, workspace=ws)
    assert any(p.endswith("train.py") for p in analysis.dependencies), analysis.dependencies
    # Without the reset the next forward builds on the graph the last backward freed.
    ws.set_overlay(str(tmp_path / "tagger" / "train.py"), NO_RESET)
    assert gs413(path, ws) == [17]
    # Without a workspace the callers are not seen: the module alone has the shape.
    assert gs413(path, None) == [17]


def test_state_reset_by_the_importer_itself(tmp_path):
    run = RUN.replace("print(train(model, batches, opt))\n",
                      "for x, y in batches:\n    model.hidden = model.init_hidden()\n"
                      "    loss = model(x).pow(2).mean()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n")
    path = make(tmp_path, train=NO_RESET, run=run)
    assert gs413(path, Workspace(tmp_path)) == []


def test_a_state_of_the_callers_own_object_is_no_reset(tmp_path):
    # The importer's own class stores `self.hidden`: another object's attribute, not the model's.
    run = RUN + ("\n\nclass Logger:\n    def __init__(self):\n        self.hidden = None\n\n"
                 "    def log(self, model):\n        self.hidden = model.hidden\n")
    path = make(tmp_path, train=NO_RESET, run=run)
    assert gs413(path, Workspace(tmp_path)) == [17]


def test_a_test_file_is_no_caller(tmp_path):
    path = make(tmp_path, train=NO_RESET)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_model.py").write_text(
        "from tagger.model import Tagger\n\n\ndef test_step():\n    m = Tagger()\n"
        "    m.hidden = m.init_hidden()\n    m(__import__('torch').randn(2, 5, 3))\n")
    assert gs413(path, Workspace(tmp_path)) == [17]


@pytest.mark.torch
def test_the_projects_behave_as_claimed_under_torch(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "good").mkdir()
    (tmp_path / "bad").mkdir()
    make(tmp_path / "good")
    good = subprocess.run([sys.executable, "run.py"], cwd=tmp_path / "good", capture_output=True, text=True,
                          timeout=300)
    assert good.returncode == 0, good.stderr[-2000:]
    make(tmp_path / "bad", train=NO_RESET)
    bad = subprocess.run([sys.executable, "run.py"], cwd=tmp_path / "bad", capture_output=True, text=True,
                         timeout=300)
    assert "backward through the graph a second time" in bad.stderr, bad.stderr[-2000:]
