"""Reproduction for `vae_iwae_weights_not_detached`: AntixK/PyTorch-VAE commit 20f09ac800 ("bug fix IWAE: use SGVB1 instead of SGVB2, detach sample weights gradient properly").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `IWAE.loss_function` computes the normalised importance weights `weight = F.softmax(log_weight)` from
the per-sample objective without detaching it (the `.detach()` is commented out) and uses
`sum(weight * log_weight)`, so backward also differentiates through the weights and adds a spurious
`sum(log_weight * d weight)` term to the IWAE gradient; the fix uses `F.softmax(elbo.detach())`, so each
sample's objective gets exactly its normalised weight.
"""

import torch
import torch.nn.functional as F

torch.manual_seed(0)
log_w = torch.randn(3, 5, requires_grad=True)        # [B x S] per-sample objective


def grad_of(loss):
    return torch.autograd.grad(loss, log_w)[0]


w = F.softmax(log_w.detach(), dim=-1)                 # the IWAE estimator's gradient weights (B = 3 averaged)
expected = w / 3

buggy = grad_of(torch.mean(torch.sum(F.softmax(log_w, dim=-1) * log_w, dim=-1), dim=0))
fixed = grad_of(torch.mean(torch.sum(F.softmax(log_w.detach(), dim=-1) * log_w, dim=-1), dim=0))

assert not torch.allclose(buggy, expected, atol=1e-4)   # buggy: extra gradient through the weights
assert torch.allclose(fixed, expected)

print("CONFIRMED")
