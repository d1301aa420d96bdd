"""Findings placed in another file than the one analysed, where the fix goes (`Reporter.add_in`).

A buffer updated in a module's `forward` in center.py keeps the training step's graph; train.py's second
backward raises through it. train.py's analysis is the one that sees it (center.py alone does not know what
its callers pass), and the statement to change is center.py's assignment: the finding stands there, with
train.py's backward as the failing line in `related`. The CLI shows it once, under center.py, with a path
written like the checked files' paths; a suppression comment in center.py silences it. The programs are run
under torch to check that the INVALID project raises and the VALID one does not.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

CENTER = """\
import torch
import torch.nn as nn


class RunningCenter(nn.Module):
    def __init__(self, dim, momentum=0.9):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("center", torch.zeros(dim))

    def forward(self, feats):
        batch_center = feats.mean(dim=0)
        self.center = self.momentum * self.center + (1 - self.momentum) * batch_center
        return feats - self.center
"""

CENTER_VALID = CENTER.replace("* batch_center", "* batch_center.detach()")

TRAIN = """\
import torch
import torch.nn as nn

from center import RunningCenter

encoder = nn.Linear(6, 4)
centering = RunningCenter(4)
opt = torch.optim.SGD(encoder.parameters(), lr=0.1)
for step in range(3):
    loss = centering(encoder(torch.randn(8, 6))).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

METRICS = """\
import torch


class MeanAbsoluteError:
    def __init__(self):
        self.total = torch.tensor(0.0)

    def update(self, pred, target):
        self.total += (pred - target).abs().sum()
"""

TRAIN_METRIC = """\
import torch
import torch.nn as nn

from metrics import MeanAbsoluteError

model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
mae = MeanAbsoluteError()
for step in range(3):
    x, y = torch.randn(5, 3), torch.randn(5, 1)
    pred = model(x)
    loss = (pred - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    mae.update(pred, y)
print(mae.total.grad_fn is not None)
"""


TAGGER = """\
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, batch_size):
        super().__init__()
        self.lstm = nn.LSTM(3, 4, batch_first=True)
        self.linear = nn.Linear(4, 1)
        self.hidden = (torch.zeros(1, batch_size, 4), torch.zeros(1, batch_size, 4))

    def forward(self, x):
        out, self.hidden = self.lstm(x, self.hidden)
        return self.linear(out[:, -1, :])
"""

TAGGER_VALID = TAGGER.replace(
    "        out, self.hidden = self.lstm(x, self.hidden)\n",
    "        out, hidden = self.lstm(x, self.hidden)\n        self.hidden = tuple(h.detach() for h in hidden)\n")

TRAIN_TAGGER = """\
import torch

from tagger import Tagger

model = Tagger(2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    loss = model(torch.randn(2, 5, 3)).pow(2).mean()
    loss.backward()
    opt.step()
"""


def project(tmp_path: pathlib.Path, **files: str) -> pathlib.Path:
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    return tmp_path


def check(folder: pathlib.Path, *paths: str) -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "gradsight", "check", "--no-cache", "--output-format", "json",
                           *paths], cwd=folder, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_buffer_kept_graph_is_reported_where_it_is_stored(tmp_path):
    folder = project(tmp_path, center=CENTER, train=TRAIN)
    for paths in (["train.py"], ["."], ["train.py", "center.py"]):
        found = [f for f in check(folder, *paths) if f["severity"] in ("warning", "error")]
        assert [(f["path"], f["line"], f["code"]) for f in found] == [("center.py", 13, "GS402")], (paths, found)
        related = {(r["path"], r["line"]) for r in found[0]["related"]}
        assert ("train.py", 12) in related  # the failing backward


def test_detached_buffer_update_is_quiet(tmp_path):
    folder = project(tmp_path, center=CENTER_VALID, train=TRAIN)
    assert [f for f in check(folder, ".") if f["severity"] in ("warning", "error")] == []


def test_suppression_comment_in_the_other_file_applies(tmp_path):
    center = CENTER.replace("* batch_center\n", "* batch_center  # gradsight: ignore[GS402]\n")
    folder = project(tmp_path, center=center, train=TRAIN)
    assert [f for f in check(folder, ".") if f["code"] == "GS402"] == []


def test_metric_update_keeping_graphs_is_reported_in_the_metric(tmp_path):
    folder = project(tmp_path, metrics=METRICS, train=TRAIN_METRIC)
    found = [f for f in check(folder, ".") if f["severity"] in ("warning", "error")]
    assert [(f["path"], f["line"], f["code"]) for f in found] == [("metrics.py", 9, "GS404")]
    assert ("train.py", 16) in {(r["path"], r["line"]) for r in found[0]["related"]}  # the call that feeds it
    valid = project(tmp_path, metrics=METRICS.replace(".abs().sum()", ".abs().sum().detach()"), train=TRAIN_METRIC)
    assert [f for f in check(valid, ".") if f["severity"] in ("warning", "error")] == []


def test_two_importers_give_one_finding(tmp_path):
    folder = project(tmp_path, center=CENTER, train=TRAIN, train2=TRAIN)
    found = [f for f in check(folder, ".") if f["code"] == "GS402"]
    assert [(f["path"], f["line"]) for f in found] == [("center.py", 13)]


def test_absolute_paths_stay_absolute(tmp_path):
    folder = project(tmp_path, center=CENTER, train=TRAIN)
    found = check(folder, str(folder / "train.py"))
    assert [f["path"] for f in found if f["code"] == "GS402"] == [str((folder / "center.py").resolve())]


def test_analysis_api_reports_the_other_file_with_a_workspace(tmp_path):
    from gradsight.analysis import analyze_source
    from gradsight.engine.workspace import Workspace

    folder = project(tmp_path, center=CENTER, train=TRAIN)
    path = str(folder / "train.py")
    found = analyze_source(TRAIN, path, workspace=Workspace(folder)).findings
    assert [(pathlib.Path(f.path).name, f.line) for f in found if f.code == "GS402"] == [("center.py", 13)]
    # Without a workspace the other file is not read: nothing to say about it.
    assert [f for f in analyze_source(TRAIN, path).findings if f.code == "GS402"] == []


def test_lstm_state_kept_on_the_module_is_reported_once_where_it_is_stored(tmp_path):
    # The `(h, c)` tuple stored on `self` keeps each tensor's graph; the training script's analysis follows it
    # into the next step (GS402), and the module file alone is recognised by its shape (GS413). Checked together,
    # the line gets one finding: GS402, which names the backward that frees the graph.
    folder = project(tmp_path, tagger=TAGGER, train=TRAIN_TAGGER)
    found = [f for f in check(folder, ".") if f["severity"] in ("warning", "error")]
    assert [(f["path"], f["line"], f["code"]) for f in found] == [("tagger.py", 13, "GS402")], found
    assert ("train.py", 10) in {(r["path"], r["line"]) for r in found[0]["related"]}
    alone = [f for f in check(folder, "tagger.py") if f["severity"] in ("warning", "error")]
    assert [(f["path"], f["line"], f["code"]) for f in alone] == [("tagger.py", 13, "GS413")], alone
    valid = project(tmp_path, tagger=TAGGER_VALID, train=TRAIN_TAGGER)
    assert [f for f in check(valid, ".") if f["severity"] in ("warning", "error")] == []


def test_drop_restated_keeps_the_finding_with_evidence():
    from gradsight.findings import Finding, Severity, drop_restated

    def finding(code: str, line: int) -> Finding:
        return Finding(path="m.py", line=line, column=9, end_line=line, end_column=20, code=code, name=code,
                       severity=Severity.WARNING, message="m")

    kept = drop_restated([finding("GS413", 13), finding("GS402", 13), finding("GS413", 20)])
    assert [(f.code, f.line) for f in kept] == [("GS402", 13), ("GS413", 20)]


def run(folder: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "train.py"], cwd=folder, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=""), timeout=300)


@pytest.mark.torch
def test_the_examples_behave_as_claimed_under_torch(tmp_path):
    pytest.importorskip("torch")
    for name in ("bad", "good", "metric"):
        (tmp_path / name).mkdir()
    bad = run(project(tmp_path / "bad", center=CENTER, train=TRAIN))
    assert bad.returncode != 0 and "Trying to backward through the graph a second time" in bad.stderr
    good = run(project(tmp_path / "good", center=CENTER_VALID, train=TRAIN))
    assert good.returncode == 0, good.stderr
    metric = run(project(tmp_path / "metric", metrics=METRICS, train=TRAIN_METRIC))
    assert metric.returncode == 0 and metric.stdout.strip() == "True"  # the metric's total carries a graph
    for name in ("tagger_bad", "tagger_good"):
        (tmp_path / name).mkdir()
    bad = run(project(tmp_path / "tagger_bad", tagger=TAGGER, train=TRAIN_TAGGER))
    assert bad.returncode != 0 and "Trying to backward through the graph a second time" in bad.stderr
    good = run(project(tmp_path / "tagger_good", tagger=TAGGER_VALID, train=TRAIN_TAGGER))
    assert good.returncode == 0, good.stderr
