"""Reproduction for `studiogan_eval_no_grad_latent_op`: POSTECH-CVLab/PyTorch-StudioGAN commit 0a668db5 ("add dummy torch.no_grad() for latent op").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `evaluation()` wraps the whole evaluation in `torch.no_grad()`, but with latent_op enabled the sampling
code runs `latent_optimise`, which calls `torch.autograd.grad(D(G(z)), z)`; under no_grad the output has no
grad_fn and torch raises "element 0 of tensors does not require grad". The fix uses a dummy context when latent_op is on.
"""

import contextlib

import torch
from torch import autograd

G = torch.nn.Linear(4, 8)
D = torch.nn.Linear(8, 1)


def calc_derv(inputs):
    z = autograd.Variable(inputs, requires_grad=True)
    dis_out_fake = D(G(z))
    gradients = autograd.grad(outputs=dis_out_fake, inputs=z, grad_outputs=torch.ones(dis_out_fake.size()),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    return gradients


def evaluation(fixed, latent_op=True):
    ctx = (torch.no_grad() if latent_op is False else contextlib.nullcontext()) if fixed else torch.no_grad()
    with ctx:
        z = torch.randn(5, 4)
        if latent_op:
            z = z + 0.1 * calc_derv(z)      # latent_optimise
        return G(z)


try:
    evaluation(fixed=False)
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "does not require grad" in str(e), e
out = evaluation(fixed=True)
assert out.shape == (5, 8)

print("CONFIRMED")
