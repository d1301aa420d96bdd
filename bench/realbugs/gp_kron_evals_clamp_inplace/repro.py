"""Reproduction for `gp_kron_evals_clamp_inplace`: cornellius-gp/gpytorch commit 5d9c38f29d ("Avoid using in-place tensor modifications").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `evals_.clamp_min_(0.0)` modifies in place the eigenvalues returned by the symmetric eigendecomposition, which its backward saves, so backward raises "modified by an inplace operation".
"""

import torch

def raises(fn, text):
    try:
        fn()
    except RuntimeError as exc:
        assert text in str(exc), exc
        return
    raise AssertionError("expected RuntimeError: " + text)

def run(inplace):
    a = torch.randn(3, 3, requires_grad=True)
    sym = a @ a.T
    evals_, evecs = torch.linalg.eigh(sym)
    evals_ = evals_.clamp_min_(0.0) if inplace else evals_.clamp_min(0.0)
    (evals_.sum() + evecs.sum()).backward()

raises(lambda: run(True), "modified by an inplace operation")
run(False)

print("CONFIRMED")
