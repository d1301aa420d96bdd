"""GS301 in an arm only evaluation mode runs: MVSNet's cost volume (xy-guo/MVSNet_pytorch, round 19; mvsnerf, round
36) sums the views out of place `if self.training:` and in place `else:`, where the model runs under `no_grad`.
The write overwrites a tensor `** 2` saved, which raises only when a backward runs through the module in eval mode:
information. The same write in the arm training runs stays a warning. Torch confirms: the training forward and
backward run, the same backward in eval mode raises."""

import subprocess
import sys

import pytest

from gradsight.analysis import analyze_source
from gradsight.findings import Severity

NET = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, feats):
        ref = self.conv(feats[0]).unsqueeze(2).repeat(1, 1, 3, 1, 1)
        volume_sum = ref
        volume_sq_sum = ref ** 2
        for f in feats[1:]:
            warped = self.conv(f).unsqueeze(2).repeat(1, 1, 3, 1, 1)
            if self.training:
                volume_sum = volume_sum + warped
                volume_sq_sum = volume_sq_sum + warped ** 2
            else:
                volume_sum += warped
                volume_sq_sum = volume_sq_sum + warped ** 2
        return volume_sq_sum - volume_sum ** 2


net = Net()
'''
TRAIN_ARM = NET.replace("            if self.training:\n", "            if not self.training:\n")


def gs301(src):
    return [(f.line, f.severity) for f in analyze_source(src, "m.py").findings if f.code == "GS301"]


def test_a_write_in_the_evaluation_arm_is_information():
    assert gs301(NET) == [(20, Severity.INFORMATION)]


def test_the_same_write_in_the_training_arm_stays_a_warning():
    assert gs301(TRAIN_ARM) == [(20, Severity.WARNING)]


@pytest.mark.torch
def test_torch_agrees():
    pytest.importorskip("torch")
    run = ("feats = torch.rand(3, 1, 3, 4, 4)\n"
           "net.train()\nnet(feats).mean().backward()\nprint('train ok')\n"
           "with torch.no_grad():\n    net.eval()\n    net(feats)\nprint('eval no_grad ok')\n"
           "try:\n    net(feats).mean().backward()\nexcept RuntimeError as e:\n    print('eval backward raises' if "
           "'inplace operation' in str(e) else e)\n")
    out = subprocess.run([sys.executable, "-c", NET + run], capture_output=True, text=True, timeout=120)
    assert out.stdout.split("\n")[:3] == ["train ok", "eval no_grad ok", "eval backward raises"], out.stderr
    out = subprocess.run([sys.executable, "-c", TRAIN_ARM + "net.train()\ntry:\n    net(torch.rand(3, 1, 3, 4, 4))"
                          ".mean().backward()\nexcept RuntimeError as e:\n    print('inplace operation' in str(e))\n"],
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True", out.stderr
