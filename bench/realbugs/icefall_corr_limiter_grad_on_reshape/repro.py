"""Reproduction for `icefall_corr_limiter_grad_on_reshape`: k2-fsa/icefall commit e16f0d440 ("Bug fix to have gradients be actually be computed.").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: CorrelationLimiterFunction.backward detaches x and y, reshapes them to X, Y and sets
`X.requires_grad = True` on the reshaped tensors, then returns `x.grad`; the penalty's gradient lands in X.grad,
so `x.grad` is None and the auxiliary gradient is silently never applied; the fix sets requires_grad on x and y
before the reshape.
"""

import torch


def aux_backward(x, y, fixed, dim=4):
    with torch.enable_grad():
        x, y = x.detach(), y.detach()
        if fixed:
            x.requires_grad = True
            y.requires_grad = True
        X, Y = x.reshape(-1, dim), y.reshape(-1, dim)
        if not fixed:
            X.requires_grad = True                  # buggy
            Y.requires_grad = True
        r = torch.randn(8, dim) @ X.t() @ Y
        loss = (r ** 2).mean()
        loss.backward()
    return x.grad, y.grad


torch.manual_seed(0)
x, y = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
gx, gy = aux_backward(x, y, fixed=False)
assert gx is None and gy is None                    # nothing returned to autograd: the penalty is lost
gx, gy = aux_backward(x, y, fixed=True)
assert gx is not None and gx.shape == x.shape and gx.abs().sum() > 0
print("CONFIRMED")
