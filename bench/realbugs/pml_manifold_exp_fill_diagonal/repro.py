"""Reproduction for `pml_manifold_exp_fill_diagonal`: KevinMusgrave/pytorch-metric-learning commit a55a77e5 ("solved problem with backward computation").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `S = torch.exp(S / 0.5)` saves its output for backward, and the following `S.fill_diagonal_(0)`
modifies that output in place, so `loss.backward()` raises "one of the variables needed for gradient
computation has been modified by an inplace operation"; the fix writes `S = S - S * Y` (out of place).
"""

import torch

emb = torch.randn(5, 3, requires_grad=True)


def run(fixed):
    e = torch.nn.functional.normalize(emb, dim=1)
    S = (e @ e.T).clamp(0, float("inf"))
    S = torch.exp(S / 0.5)
    Y = torch.eye(5, dtype=S.dtype)
    if fixed:
        S = S - S * Y
    else:
        S.fill_diagonal_(0)                      # buggy
    D_inv_half = torch.pow(torch.sum(S, dim=1), -1 / 2).diag()
    S_bar = D_inv_half.mm(S).mm(D_inv_half)
    loss = torch.inverse(Y - 0.9 * S_bar).sum()
    loss.backward()


try:
    run(False)
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
emb.grad = None
run(True)
assert emb.grad is not None and torch.isfinite(emb.grad).all()

print("CONFIRMED")
