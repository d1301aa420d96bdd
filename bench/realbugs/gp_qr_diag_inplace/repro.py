"""Reproduction for `gp_qr_diag_inplace`: cornellius-gp/gpytorch commit b003438a47 ("Fix in-place operation in get_fantasy_strategy").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `Rdiag[zeroish] = 1e-6` writes into a view of `R` from `torch.qr`, whose outputs are saved for the QR backward, so backward raises "modified by an inplace operation".
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
    new_root = torch.randn(4, 3, requires_grad=True)
    Q, R = torch.linalg.qr(new_root)
    if inplace:
        Rdiag = torch.diagonal(R, dim1=-2, dim2=-1)
        zeroish = Rdiag.abs() < 1e6                   # force the branch
        Rdiag[zeroish] = 1e-6                          # buggy: writes into R, saved by QR's backward
    (Q.sum() + R.sum()).backward()

raises(lambda: run(True), "modified by an inplace operation")
run(False)

print("CONFIRMED")
