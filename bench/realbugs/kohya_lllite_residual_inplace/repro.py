"""Reproduction for `kohya_lllite_residual_inplace`: kohya-ss/sd-scripts commit 06461120 ("fix a bug x is updated inplace").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: LLLiteModule.forward feeds the input `x` to the trainable `self.down` Linear (which saves `x` for its
weight gradient) and then adds the residual in place (`x += cx`), so backward raises the in-place
modification RuntimeError; the fix passes `x + cx` to the original forward instead.
"""

import torch

torch.manual_seed(0)
down = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU(inplace=True))   # trainable LLLite down
mid = torch.nn.Sequential(torch.nn.Linear(4 + 3, 4), torch.nn.ReLU(inplace=True))
up = torch.nn.Linear(4, 8)
org = torch.nn.Linear(8, 8).requires_grad_(False)                                   # frozen wrapped module
prev = torch.nn.Linear(8, 8).requires_grad_(False)                                  # frozen layer that produces x
cond_emb = torch.randn(2, 5, 3)


def forward(x, fixed):
    cx = torch.cat([cond_emb, down(x)], dim=2)
    cx = up(mid(cx))
    if fixed:
        return org(x + cx)
    x += cx                      # buggy: in place on the tensor `down` saved
    return org(x)


def step(fixed):
    x = prev(torch.randn(2, 5, 8))
    forward(x, fixed).sum().backward()


try:
    step(False)
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
step(True)
assert down[0].weight.grad is not None
print("CONFIRMED")
