"""Cross-file shape: a trainer handed a loss object that returns the generator's and the discriminator's losses one
by one (mkocabas/VIBE `lib/core/trainer.py:186`, bench/fresh19-false/02). `gen_loss, dis_loss, info =
self.criterion(...)`, then `gen_loss.backward()` and, every k steps, `dis_loss.backward()`. VIBE's loss runs the
discriminator again on `preds.detach()`, so the two backwards share no node. Seen alone, the trainer cannot tell;
GS416 no longer takes two losses unpacked from one call handed in for one graph. Where the loss object is visible
(the script that builds the trainer), the data flow decides: the twin whose loss forgets the `detach()` is reported
by GS402 at the second backward, and raises under torch.
"""

import subprocess
import sys

import pytest

from gradsight.analysis import analyze_source
from gradsight.engine.workspace import Workspace

TRAINER = """import torch


class Trainer:
    def __init__(self, gen, disc, criterion, gen_opt, dis_opt, dis_every=1):
        self.gen = gen
        self.disc = disc
        self.criterion = criterion
        self.gen_opt = gen_opt
        self.dis_opt = dis_opt
        self.dis_every = dis_every

    def fit(self, batches):
        for step, (x, real) in enumerate(batches):
            preds = self.gen(x)
            gen_loss, dis_loss, info = self.criterion(preds, real, self.disc)
            self.gen_opt.zero_grad()
            gen_loss.backward()
            self.gen_opt.step()
            if step % self.dis_every == 0:
                self.dis_opt.zero_grad()
                dis_loss.backward()
                self.dis_opt.step()
        return info
"""

LOSS = """import torch.nn as nn


class GANLoss(nn.Module):
    def forward(self, preds, real, disc):
        gen_loss = ((disc(preds) - 1) ** 2).mean() + preds.pow(2).mean()
        fake = preds.detach()
        dis_loss = (disc(fake) ** 2).mean() + ((disc(real) - 1) ** 2).mean()
        return gen_loss, dis_loss, {"gen": gen_loss.item()}
"""

NO_DETACH = LOSS.replace("fake = preds.detach()", "fake = preds")

RUN = """import torch
import torch.nn as nn

from vibe.loss import GANLoss
from vibe.trainer import Trainer

gen, disc = nn.Sequential(nn.Linear(4, 6), nn.Tanh()), nn.Linear(6, 1)
trainer = Trainer(gen, disc, GANLoss(), torch.optim.SGD(gen.parameters(), lr=0.1),
                  torch.optim.SGD(disc.parameters(), lr=0.1))
print(trainer.fit([(torch.randn(3, 4), torch.randn(3, 6)) for _ in range(3)]))
"""


def make(root, loss=LOSS):
    (root / "vibe").mkdir(parents=True, exist_ok=True)
    (root / "vibe" / "__init__.py").write_text("")
    (root / "vibe" / "trainer.py").write_text(TRAINER)
    (root / "vibe" / "loss.py").write_text(loss)
    (root / "run.py").write_text(RUN)
    (root / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    return str(root / "vibe" / "trainer.py")


def codes(path, ws):
    return [(f.code, f.line) for f in analyze_source(TRAINER, path, workspace=ws).findings]


def test_losses_unpacked_from_a_loss_object_handed_in_are_not_one_graph(tmp_path):
    path = make(tmp_path)
    assert codes(path, None) == []  # the trainer alone: VIBE's situation
    assert codes(path, Workspace(tmp_path)) == []


def test_the_loss_object_that_forgets_detach_is_found_through_the_script(tmp_path):
    path = make(tmp_path, loss=NO_DETACH)
    assert codes(path, Workspace(tmp_path)) == [("GS402", 22)]


@pytest.mark.torch
def test_the_projects_behave_as_claimed_under_torch(tmp_path):
    pytest.importorskip("torch")
    make(tmp_path / "good")
    good = subprocess.run([sys.executable, "run.py"], cwd=tmp_path / "good", capture_output=True, text=True,
                          timeout=300)
    assert good.returncode == 0, good.stderr[-2000:]
    make(tmp_path / "bad", loss=NO_DETACH)
    bad = subprocess.run([sys.executable, "run.py"], cwd=tmp_path / "bad", capture_output=True, text=True,
                         timeout=300)
    assert "backward through the graph a second time" in bad.stderr, bad.stderr[-2000:]
