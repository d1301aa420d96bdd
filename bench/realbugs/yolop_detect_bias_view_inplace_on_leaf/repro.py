"""Reproduction for `yolop_detect_bias_view_inplace_on_leaf`: hustvl/YOLOP 051ae2d0 (Leaf Variable inplace bug fix).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import math

import torch
import torch.nn as nn

na, nc = 3, 1
m = nn.ModuleList(nn.Conv2d(8, na * (nc + 5), 1) for _ in range(3))
stride = torch.tensor([8., 16., 32.])


def initialize_biases(fixed, cf=None):
    for mi, s in zip(m, stride):
        b = mi.bias.view(na, -1)
        if fixed:
            b.data[:, 4] += math.log(8 / (640 / s) ** 2)
            b.data[:, 5:] += math.log(0.6 / (nc - 0.99)) if cf is None else torch.log(cf / cf.sum())
        else:
            b[:, 4] += math.log(8 / (640 / s) ** 2)      # buggy: in-place on a view of a leaf that requires grad
            b[:, 5:] += math.log(0.6 / (nc - 0.99)) if cf is None else torch.log(cf / cf.sum())
        mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


try:
    initialize_biases(False)
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "leaf Variable that requires grad" in str(e), e
initialize_biases(True)
print("CONFIRMED")
