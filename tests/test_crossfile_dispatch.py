"""Cross-file shape: a captioning model whose base class's `forward` picks a method by a string
(`getattr(self, '_' + mode)(*args, **kwargs)`, ImageCaptioning.pytorch's and R2Gen's `CaptionModel`), a subclass in
another file whose `_sample` decodes with in-place writes on `log_softmax`'s output, and a tester that imports
neither but runs `self.model(images, mode='sample')` under `torch.no_grad()` (bench/fresh30-notes.md, R2Gen
`modules/att_model.py:271, 312`; round 11's ImageCaptioning.pytorch `AttModel.py:396, 444`). The string handed under
`no_grad` reaches `_sample` through the dispatch, so the sampler starts with grad mode unknown (as its own analysis
and the subclass's inherited run both do) and nothing is reported. The twin whose trainer samples in grad mode and
backwards through the log-probs (self-critical training) is reported, and raises under torch.
"""

import subprocess
import sys

import pytest

from gradsight.analysis import analyze_source
from gradsight.engine.workspace import Workspace

BASE = """import torch.nn as nn


class CaptionModel(nn.Module):
    def forward(self, *args, **kwargs):
        mode = kwargs.get('mode', 'forward')
        if 'mode' in kwargs:
            del kwargs['mode']
        return getattr(self, '_' + mode)(*args, **kwargs)
"""

ATT = """import torch.nn as nn
import torch.nn.functional as F

from cap.caption_model import CaptionModel


class AttModel(CaptionModel):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 11)

    def _forward(self, x):
        return F.log_softmax(self.lin(x), dim=-1)

    def _sample(self, x):
        logprobs = F.log_softmax(self.lin(x), dim=-1)
        logprobs[:, [1, 2]] = logprobs[:, [1, 2]] - 0.5
        return logprobs.argmax(-1), logprobs
"""

TESTER = """import torch


class Tester:
    def __init__(self, model):
        self.model = model

    def test(self, batches):
        out = []
        with torch.no_grad():
            for x in batches:
                seq, _ = self.model(x, mode='sample')
                out.append(seq)
        return out
"""

SCST = """import torch


class Tester:
    def __init__(self, model):
        self.model = model

    def test(self, batches):
        out = []
        for x in batches:
            seq, logp = self.model(x, mode='sample')
            (-logp.max(-1)[0].mean()).backward()
            out.append(seq)
        return out
"""

RUN = """import torch

from cap.att_model import AttModel
from cap.tester import Tester

model = AttModel()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    loss = -model(torch.randn(4, 8), mode='forward')[:, 0].mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(len(Tester(model).test([torch.randn(4, 8)])))
"""


def make(root, tester=TESTER):
    (root / "cap").mkdir(parents=True, exist_ok=True)
    (root / "cap" / "__init__.py").write_text("")
    (root / "cap" / "caption_model.py").write_text(BASE)
    (root / "cap" / "att_model.py").write_text(ATT)
    (root / "cap" / "tester.py").write_text(tester)
    (root / "run.py").write_text(RUN)
    (root / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    return str(root / "cap" / "att_model.py")


def gs301(path, ws):
    return [f.line for f in analyze_source(ATT, path, workspace=ws).findings if f.code == "GS301"]


def test_a_sampler_reached_by_name_only_under_no_grad_is_quiet(tmp_path):
    path = make(tmp_path)
    assert gs301(path, Workspace(tmp_path)) == []
    # Alone, nothing says how `_sample` is run.
    assert gs301(path, None) == [17]


def test_the_sampler_run_in_grad_mode_and_backwarded_is_reported(tmp_path):
    path = make(tmp_path, tester=SCST)
    assert gs301(path, Workspace(tmp_path)) == [17]


@pytest.mark.torch
def test_the_projects_behave_as_claimed_under_torch(tmp_path):
    pytest.importorskip("torch")
    make(tmp_path / "good")
    good = subprocess.run([sys.executable, "run.py"], cwd=tmp_path / "good", capture_output=True, text=True,
                          timeout=300)
    assert good.returncode == 0, good.stderr[-2000:]
    make(tmp_path / "bad", tester=SCST)
    bad = subprocess.run([sys.executable, "run.py"], cwd=tmp_path / "bad", capture_output=True, text=True,
                         timeout=300)
    assert "modified by an inplace operation" in bad.stderr, bad.stderr[-2000:]
