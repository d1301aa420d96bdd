"""Reproduction for `art_pgd_abs_inplace_on_grad_view`: Trusted-AI/adversarial-robustness-toolbox commit 12e13472 ("dont use inplace abs_() on view").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: in PGD's `_compute_perturbation`, `flat = grad.reshape(len(grad), -1)` is a view of the loss gradient, so
`flat.abs_()` (L1 and Lp>1 norms) overwrites the gradient itself with its absolute value; the final
`flat.reshape(grad.shape) * grad.sign()` then sees an all-non-negative gradient and every perturbation step points
in the + direction regardless of the true gradient sign; the fix uses out-of-place `flat.abs()`.
"""

import torch

torch.manual_seed(0)
loss_grad = torch.randn(2, 3, 4, 4)        # estimator.loss_gradient(x, y)


def perturbation(grad, fixed, p=2):
    flat = grad.reshape(len(grad), -1)     # a view of grad
    q = p / (p - 1)
    q_norm = torch.linalg.norm(flat, ord=q, dim=1, keepdim=True)
    a = flat.abs() if fixed else flat.abs_()
    flat = (a * q_norm.where(q_norm == 0, 1 / q_norm)) ** (q - 1)
    return flat.reshape(grad.shape) * grad.sign()


buggy = perturbation(loss_grad.clone(), fixed=False)
assert (buggy >= 0).all()                                   # the gradient's sign has been destroyed
fixed = perturbation(loss_grad.clone(), fixed=True)
assert torch.equal(fixed.sign(), loss_grad.sign())          # the step follows the gradient's sign

print("CONFIRMED")
