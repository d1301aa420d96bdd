"""Reproduction for `torchopt_adam_sqrt_inplace_add`: metaopt/torchopt commit f3984935 ("fix(transform): fix inplace sqrt_ with add_").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the differentiable (inplace=False) Adam/RMS/stddev transforms compute `m.div(v.add(eps_root).sqrt_().add_(eps))`;
`sqrt_` saves its result for backward and the following `add_` bumps that result's version, so back-propagating the
meta-loss through the update (second-order, create_graph=True) raises "modified by an inplace operation".
The fix uses out-of-place `.add(eps)`.
"""

import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)              # meta-parameter / initial weights
x, y = torch.randn(8, 3), torch.randn(8)
b1, b2, eps, eps_root, lr = 0.9, 0.999, 1e-8, 0.0, 0.1


def inner_step(fixed):
    loss = ((x @ w - y) ** 2).mean()
    g, = torch.autograd.grad(loss, w, create_graph=True)   # MetaOptimizer.step
    m = (1 - b1) * g
    v = (1 - b2) * g * g
    m_hat, v_hat = m / (1 - b1), v / (1 - b2)
    if fixed:
        upd = m_hat.div(v_hat.add(eps_root).sqrt_().add(eps))
    else:
        upd = m_hat.div(v_hat.add(eps_root).sqrt_().add_(eps))   # buggy
    return w - lr * upd


try:
    w_new = inner_step(False)
    ((x @ w_new - y) ** 2).mean().backward()
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
w_new = inner_step(True)
((x @ w_new - y) ** 2).mean().backward()
assert w.grad is not None and torch.isfinite(w.grad).all()

print("CONFIRMED")
