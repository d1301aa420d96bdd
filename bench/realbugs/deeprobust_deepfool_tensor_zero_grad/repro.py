"""Reproduction for `deeprobust_deepfool_tensor_zero_grad`: DSE-MSU/DeepRobust commit 5519141 ("<fix> zero_gradients() removed from torch.autograd.gradcheck").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: DeepFool must clear the input's accumulated gradient between the per-class `backward(retain_graph=True)`
calls; the parent called `x.zero_grad()` on the input tensor, which torch.Tensor does not have (only
nn.Module/optimizers do), so every attack raised; the fix restores a zero_gradients helper that zeroes `x.grad`.
"""

import torch


def zero_gradients(x):
    if x.grad is not None:
        x.grad.detach_()
        x.grad.zero_()


torch.manual_seed(0)
model = torch.nn.Linear(4, 3)
x = torch.randn(1, 4).requires_grad_(True)
fs = model(x)
fs[0, 0].backward(retain_graph=True)
grad_orig = x.grad.clone()

try:
    x.zero_grad()                                            # buggy
    raise SystemExit("buggy form did not raise")
except AttributeError as e:
    assert "zero_grad" in str(e), e

zero_gradients(x)                                            # fixed
fs[0, 1].backward(retain_graph=True)
assert torch.allclose(x.grad, model.weight[1:2])             # only class 1's gradient, nothing accumulated
print("CONFIRMED")
