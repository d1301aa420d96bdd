"""Reproduction for `phenaki_discr_stale_gen_grads`: lucidrains/phenaki-pytorch 3c33570 (fix a discriminator gradient issue).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


def train_step(fixed):
    torch.manual_seed(0)
    enc = torch.nn.Linear(4, 4)                  # the VAE (generator)
    discr = torch.nn.Linear(4, 1)                # vae.discr
    optim = torch.optim.SGD(enc.parameters(), lr=0.0)
    discr_optim = torch.optim.SGD(discr.parameters(), lr=0.0)
    img = torch.randn(3, 4)
    # update vae (generator): the adversarial term backpropagates into discr as well
    recon = enc(img)
    loss = (recon - img).pow(2).mean() + (-discr(recon)).mean()
    loss.backward()
    optim.step()
    optim.zero_grad()
    # update discriminator
    if fixed:
        discr_optim.zero_grad()
    discr_loss = torch.relu(1 + discr(recon.detach())).mean() + torch.relu(1 - discr(img)).mean()
    discr_loss.backward()
    expected = torch.autograd.grad(torch.relu(1 + discr(recon.detach())).mean() + torch.relu(1 - discr(img)).mean(), discr.weight)[0]
    ok = torch.allclose(discr.weight.grad, expected)
    discr_optim.step()
    if not fixed:
        discr_optim.zero_grad()
    return ok


assert not train_step(False)        # discr steps on its own gradient plus the generator phase's
assert train_step(True)
print("CONFIRMED")
