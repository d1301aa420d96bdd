"""Reproduction for `worddisc_pos_conv_residual_inplace`: jasonppy/word-discovery 74cab62 (fix inplace operation error).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch

torch.manual_seed(0)
pos_conv = torch.nn.Sequential(torch.nn.Conv1d(8, 8, 3, padding=1), torch.nn.GELU())
proj = torch.nn.Linear(6, 8)


def forward(fixed):
    x = proj(torch.randn(2, 5, 6))
    x_conv = pos_conv(x.transpose(1, 2))       # the conv saves its input, a view of x
    x_conv = x_conv.transpose(1, 2)
    if fixed:
        x = x + x_conv
    else:
        x += x_conv                             # buggy
    return x.sum()


try:
    forward(False).backward()
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
forward(True).backward()
print("CONFIRMED")
