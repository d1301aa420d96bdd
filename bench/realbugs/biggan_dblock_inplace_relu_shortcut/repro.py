"""Reproduction for `biggan_dblock_inplace_relu_shortcut`: ajbrock/BigGAN-PyTorch commit 96e9112c ("Fix inplace ReLU mistake in DBlock.forward()").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: with a preactivation DBlock and `activation=nn.ReLU(inplace=True)`, `h = self.activation(x)` overwrites `x`
in place, so the later `self.shortcut(x)` sees relu(x) instead of x and the block's output and gradients are wrong;
the fix uses the out-of-place `F.relu(x)`.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
conv1 = nn.Conv2d(2, 2, 1)
activation = nn.ReLU(inplace=True)


def dblock(x, fixed):
    h = F.relu(x) if fixed else activation(x)
    h = conv1(h)
    return h + x                                   # shortcut(x) (identity shortcut)


inp = torch.randn(1, 2, 3, 3, requires_grad=True)
outs, grads = [], []
for fixed in (False, True):
    inp.grad = None
    x = inp * 1.0                                  # previous block's output (non-leaf)
    out = dblock(x, fixed)
    out.sum().backward()
    outs.append(out.detach())
    grads.append(inp.grad.clone())

reference = conv1(F.relu(inp.detach())) + inp.detach()
assert torch.allclose(outs[1], reference)
assert not torch.allclose(outs[0], reference)      # buggy: the shortcut carried relu(x)
assert not torch.allclose(grads[0], grads[1])      # and the input gradient differs

print("CONFIRMED")
