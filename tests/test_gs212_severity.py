"""GS212's severity follows what a dropped result costs: a `.float()` thrown away after an in-place op on a tensor
that is already floating point (erfnet's iouEval, bench/fresh32-repro/03) changes nothing and is information; the
same statement on an integer tensor leaves it an integer tensor, which torch confirms, and stays a warning."""

import subprocess
import sys

import pytest

from gradsight.analysis import analyze_source
from gradsight.findings import Severity

FLOAT = ("import torch\nx = torch.randint(0, 3, (4, 1))\nonehot = torch.zeros(4, 3)\n"
         "onehot.scatter_(1, x, 1).float()\n")
INT = ("import torch\nx = torch.randint(0, 3, (4, 1))\ncounts = torch.zeros(4, 3, dtype=torch.long)\n"
       "counts.scatter_(1, x, 1).float()\n")


def gs212(src):
    return [(f.line, f.severity) for f in analyze_source(src, "m.py").findings if f.code == "GS212"]


def test_a_float_of_a_floating_tensor_is_information():
    assert gs212(FLOAT) == [(4, Severity.INFORMATION)]


def test_a_float_of_an_integer_tensor_stays_a_warning():
    assert gs212(INT) == [(4, Severity.WARNING)]


@pytest.mark.torch
def test_torch_agrees():
    pytest.importorskip("torch")
    out = subprocess.run([sys.executable, "-c", FLOAT + "print(onehot.dtype)\n"], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "torch.float32", out.stderr
    out = subprocess.run([sys.executable, "-c", INT + "print(counts.dtype)\n"], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "torch.int64", out.stderr


# A trained parameter is floating point (only floating tensors can require grad): QDrop's
# `self.zero_point.data.clamp_(lo, hi).float()` (bench/fresh35-repro/02) is information; the same statement on an
# integer parameter made with `requires_grad=False` stays a warning.
PARAM = ("import torch\n\n\nclass FQ(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.zero_point = torch.nn.Parameter(torch.tensor([0.0]))\n\n    def forward(self, x):\n"
         "        self.zero_point.data.clamp_(0, 255).float()\n        return x * self.zero_point\n\n\n"
         "fq = FQ()\nfq(torch.randn(3)).sum().backward()\n")
INT_PARAM = PARAM.replace("torch.nn.Parameter(torch.tensor([0.0]))",
                          "torch.nn.Parameter(torch.tensor([0]), requires_grad=False)").replace(
    "fq(torch.randn(3)).sum().backward()\n", "fq(torch.randn(3))\n")


def test_a_float_of_a_trained_parameter_is_information():
    assert gs212(PARAM) == [(10, Severity.INFORMATION)]


def test_a_float_of_an_integer_parameter_stays_a_warning():
    assert gs212(INT_PARAM) == [(10, Severity.WARNING)]


@pytest.mark.torch
def test_torch_agrees_on_parameters():
    pytest.importorskip("torch")
    for src, dtype in ((PARAM, "torch.float32"), (INT_PARAM, "torch.int64")):
        out = subprocess.run([sys.executable, "-c", src + "print(fq.zero_point.dtype)\n"], capture_output=True,
                             text=True, timeout=120)
        assert out.stdout.strip() == dtype, out.stderr
