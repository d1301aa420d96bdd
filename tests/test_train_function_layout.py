"""The usual layout of a training script: `def train(model, loader, optimizer)` with the model built elsewhere (a
sibling module, `torch.load`, a caller gradsight does not see). The functions are analysed on their own, with
unknown arguments: what torch's semantics make certain (an op under `no_grad` has no history) is an error; what
only the loop's use shows (the state a model returns is fed back in while the loop backwards; a model output that
is the one input of a backwarded torch loss has a graph) is a warning.
The same functions are run under torch to check the claims."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gradsight.analysis import ENGINE, analyze_source

TRAIN = """\
import torch
import torch.nn.functional as F


def train_no_grad(model, loader, optimizer):
    for x, y in loader:
        with torch.no_grad():
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_rnn(model, loader, optimizer):
    hidden = None
    for x, y in loader:
        out, hidden = model(x, hidden)
        loss = F.cross_entropy(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_rnn_detached(model, loader, optimizer):
    hidden = None
    for x, y in loader:
        out, hidden = model(x, hidden)
        hidden = hidden.detach()
        loss = F.cross_entropy(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def evaluate(model, loader):
    with torch.no_grad():
        return [F.cross_entropy(model(x), y).item() for x, y in loader]


def train_accuracy(model, loader, optimizer):
    accs = []
    for x, y in loader:
        out = model(x)
        loss = F.cross_entropy(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        accs.append((out.numpy().argmax(1) == y.numpy()).mean())
    return accs


def train_gan(G, D, loader, opt_g, opt_d):
    for real in loader:
        fake = G(torch.randn(real.size(0), 8))
        d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake)).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = F.softplus(-D(fake)).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
"""

RUN = """\
import torch
import torch.nn as nn
from train import train_no_grad, train_rnn, train_rnn_detached, evaluate, train_accuracy, train_gan


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(3, 4, batch_first=True)
        self.head = nn.Linear(4, 2)

    def forward(self, x, h=None):
        out, h = self.rnn(x, h)
        return self.head(out[:, -1]), h


def raises(fn, text):
    try:
        fn()
    except RuntimeError as exc:
        return text in str(exc)
    return False


rnn = Tagger()
seqs = [(torch.randn(2, 5, 3), torch.tensor([0, 1])) for _ in range(3)]
opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
lin = nn.Linear(3, 2)
flat = [(torch.randn(2, 3), torch.tensor([0, 1]))]
print(raises(lambda: train_no_grad(lin, flat, torch.optim.SGD(lin.parameters(), lr=0.1)), "does not require grad"))
print(raises(lambda: train_rnn(rnn, seqs, opt), "backward through the graph a second time"))
train_rnn_detached(rnn, seqs, opt)
print(len(evaluate(lin, flat)) == 1)
print(raises(lambda: train_accuracy(lin, flat, torch.optim.SGD(lin.parameters(), lr=0.1)), "requires grad"))
G, D = nn.Sequential(nn.Linear(8, 8), nn.Tanh()), nn.Linear(8, 1)
print(raises(lambda: train_gan(G, D, [torch.randn(4, 8)], torch.optim.SGD(G.parameters(), lr=0.1),
                               torch.optim.SGD(D.parameters(), lr=0.1)), "backward through the graph a second time"))
"""


def loud(text: str) -> list[tuple[int, str, str]]:
    ENGINE.clear()
    found = analyze_source(text, "train.py").findings
    return sorted((f.line, f.code, f.severity.value) for f in found if f.severity.value in ("warning", "error"))


def test_train_functions_with_unknown_models():
    assert loud(TRAIN) == [(8, "GS401", "error"), (17, "GS415", "warning"), (48, "GS201", "warning"),
                           (55, "GS416", "warning")]


@pytest.mark.torch
def test_the_claims_hold_under_torch(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "run.py").write_text(RUN, encoding="utf-8")
    proc = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True"] * 5


# A learner class handed its model (pymarl's `QLearner(mac, ...)`): `__init__` keeps it on `self` and builds the
# optimizer over its parameters (through a list that grows with a mixer's), so `self.mac.forward(...)` and
# `self.mac(...)` in `train` run a trained model (evidence of use: warnings). The in-place mask then writes into
# what `gather` saved (torch raises); masking a detached copy is fine.
LEARNER = """\
import torch as th
from torch.optim import RMSprop


class QLearner:
    def __init__(self, mac, mixer, double_q):
        self.mac = mac
        self.params = list(mac.parameters())
        self.mixer = mixer
        if mixer is not None:
            self.params += list(mixer.parameters())
        self.optimiser = RMSprop(params=self.params, lr=0.01)
        self.double_q = double_q

    def train(self, obs, actions, avail):
        mac_out = []
        for t in range(obs.shape[1]):
            mac_out.append(self.mac.forward(obs[:, t]))
        mac_out = th.stack(mac_out, dim=1)
        chosen = th.gather(mac_out[:, :-1], dim=2, index=actions).squeeze(2)
        if self.double_q:
            mac_out[avail == 0] = -9999999
        loss = (chosen ** 2).sum()
        self.optimiser.zero_grad()
        loss.backward()
        self.optimiser.step()

    def train_call(self, obs, actions, avail):
        out = th.stack([self.mac(obs[:, t]) for t in range(obs.shape[1])], dim=1)
        chosen = th.gather(out[:, :-1], dim=2, index=actions).squeeze(2)
        masked = out.clone().detach()
        masked[avail == 0] = -9999999
        loss = (chosen ** 2).sum() + masked.max()
        self.optimiser.zero_grad()
        loss.backward()
        self.optimiser.step()
"""

LEARNER_RUN = """\
import torch
import torch.nn as nn
from learner import QLearner

mac = nn.Linear(3, 4)
obs, actions = torch.randn(2, 5, 3), torch.zeros(2, 4, 1, dtype=torch.long)
avail = torch.randint(0, 2, (2, 5, 4))
learner = QLearner(mac, nn.Linear(4, 1), True)
try:
    learner.train(obs, actions, avail)
    print("no error")
except RuntimeError as exc:
    print("modified by an inplace operation" in str(exc))
learner.train_call(obs, actions, avail)
print(True)
"""


def test_learner_handed_its_model():
    ENGINE.clear()
    found = analyze_source(LEARNER, "learner.py").findings
    assert sorted((f.line, f.code, f.severity.value) for f in found if f.severity.value != "information") == \
        [(22, "GS301", "warning")]


@pytest.mark.torch
def test_learner_claims_hold_under_torch(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "learner.py").write_text(LEARNER, encoding="utf-8")
    (tmp_path / "run.py").write_text(LEARNER_RUN, encoding="utf-8")
    proc = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True"]
