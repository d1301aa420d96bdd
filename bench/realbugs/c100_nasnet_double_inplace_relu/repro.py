"""Reproduction for `c100_nasnet_double_inplace_relu`: weiaicunzai/pytorch-cifar100 commit e791e9fa ("[bug fixed] remove inplace operations").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: in NASNet's NormalCell the same tensor `h` feeds several SeperableBranch modules that each start with
`nn.ReLU(inplace=True)`; the second in-place ReLU overwrites the output the first ReLU saved for backward, so
backward raises "modified by an inplace operation"; the fix uses out-of-place `nn.ReLU()`.
"""

import torch
import torch.nn as nn


def cell(inplace):
    branch = lambda: nn.Sequential(nn.ReLU(inplace=inplace), nn.Conv2d(2, 2, 3, padding=1), nn.BatchNorm2d(2))
    dem_reduce = nn.Sequential(nn.ReLU(inplace=inplace), nn.Conv2d(2, 2, 1, bias=False), nn.BatchNorm2d(2))
    block1_left, block1_right, block2_right = branch(), nn.Sequential(), branch()

    def forward(x):
        h = dem_reduce(x)
        x1 = block1_left(h) + block1_right(h)
        x2 = block2_right(h)
        return torch.cat([x1, x2], 1)
    return forward


x = torch.randn(2, 2, 4, 4)
try:
    cell(inplace=True)(x * 1).sum().backward()
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
cell(inplace=False)(x * 1).sum().backward()       # fixed: no error

print("CONFIRMED")
