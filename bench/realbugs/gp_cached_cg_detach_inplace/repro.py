"""Reproduction for `gp_cached_cg_detach_inplace`: cornellius-gp/gpytorch commit ead5e85fd3 ("Fix detaches").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `eager_rhs.detach_()` (and the other `detach_()` calls) detach tensors owned by the caller in place, cutting gradients that the caller still needs; the fix uses `.detach()`.
"""

import torch

w = torch.nn.Parameter(torch.randn(3))
rhs = w * 3
cached = rhs.detach_().requires_grad_(False)       # `eager_rhs.detach_().requires_grad_(False)`
assert not rhs.requires_grad and rhs.grad_fn is None   # the caller's tensor is cut off from `w`
rhs = w * 3
cached = rhs.detach()                              # the fix
assert rhs.requires_grad and cached.grad_fn is None

print("CONFIRMED")
