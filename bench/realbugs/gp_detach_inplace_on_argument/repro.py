"""Reproduction for `gp_detach_inplace_on_argument`: cornellius-gp/gpytorch commit ad622ebc82 ("switch back to .detach()").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `lazy_tsr.detach_()` detaches the caller's operator in place, so the caller's later solve no longer propagates gradients to the kernel hyper-parameters; `.detach()` makes a detached copy instead.
"""

import torch

w = torch.nn.Parameter(torch.randn(3))

def solve(t, inplace):
    with torch.no_grad():
        pre = (t.detach_() if inplace else t.detach()) * 2   # `lazy_tsr.detach_()._inv_matmul_preconditioner()`
    return t

t = w * 2
solve(t, inplace=True)
assert not t.requires_grad                          # the caller's tensor lost its history
t = w * 2
solve(t, inplace=False)
assert t.requires_grad

print("CONFIRMED")
