"""Reproduction for `timm_hgnet_residual_inplace`: huggingface/pytorch-image-models commit 6862c9850a ("fix backward in hgnet").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `HGBlock.forward` does `x = self.aggregation(x)` and then `x += identity`; with `agg='se'` and no
learnable affine block the aggregation ends in a `ReLU`, whose backward needs its output, so the in-place add
makes backward raise "modified by an inplace operation"; the fix writes `x = x + identity`.
"""

import torch
from torch import nn

torch.manual_seed(0)
aggregation = nn.Sequential(                  # ConvBNAct(..., use_act=True, use_lab=False): conv -> bn -> ReLU
    nn.Conv2d(4, 4, 1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
)


def hg_block(x, fixed):
    identity = x
    x = aggregation(x)
    if fixed:
        x = x + identity                     # the fix
    else:
        x += identity                        # buggy
    return x


inp = torch.randn(2, 4, 5, 5, requires_grad=True)
try:
    hg_block(inp, fixed=False).sum().backward()
    raise AssertionError("expected backward to raise")
except RuntimeError as exc:
    assert "modified by an inplace operation" in str(exc)

inp.grad = None
hg_block(inp, fixed=True).sum().backward()
assert inp.grad is not None

print("CONFIRMED")
