"""Reproduction for `botorch_inducing_kernel_graph`: pytorch/botorch commit 0ac6b14fe5 ("Fix memory leak in inducing point allocators (#1890)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `covar_module(inputs).evaluate_kernel()` is evaluated in grad mode to pick inducing points, so the chosen points (used later as parameters' initial values) carry the kernel hyper-parameters' graph and keep it alive; the fix evaluates under `torch.no_grad()`.
"""

import torch

lengthscale = torch.nn.Parameter(torch.tensor(1.0))
inputs = torch.randn(5, 2)
def covar_module(x):
    return torch.exp(-torch.cdist(x, x) / lengthscale)
train_train_kernel = covar_module(inputs)          # buggy: evaluated in grad mode
inducing_points = inputs[train_train_kernel.diagonal().argsort()[:2]] * train_train_kernel[0, 0]
assert inducing_points.grad_fn is not None         # the chosen points keep the kernel's graph
with torch.no_grad():                              # the fix
    train_train_kernel = covar_module(inputs)
assert train_train_kernel.grad_fn is None

print("CONFIRMED")
