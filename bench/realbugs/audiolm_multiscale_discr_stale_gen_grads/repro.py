"""Reproduction for `audiolm_multiscale_discr_stale_gen_grads`: lucidrains/audiolm-pytorch commit daeedb2798 ("make sure to address the discriminator gradient issues uncovered by @apoorv2904 for multiscale discriminators too").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the SoundStream generator loss adds `hinge_gen_loss(fake_logits)` for every multi-scale discriminator,
so its backward fills their `.grad`; each `multiscale_discr_optimizer_{ind}` was zeroed only after its
`step()`, so every multi-scale discriminator step applies the generator-loss gradient as well; the fix zeroes
all multi-scale discriminator optimizers before the discriminator backward.
"""

import torch

torch.manual_seed(0)
codec = torch.nn.Linear(4, 4)                                   # stands for the SoundStream encoder/decoder
discriminators = [torch.nn.Linear(4, 1) for _ in range(2)]      # multi-scale discriminators
optim = torch.optim.SGD(codec.parameters(), lr=0.0)             # non-discriminator parameters only
discr_optims = [torch.optim.SGD(d.parameters(), lr=0.0) for d in discriminators]
wave = torch.randn(8, 4)


def train_step(fixed):
    for p in (*codec.parameters(), *(q for d in discriminators for q in d.parameters())):
        p.grad = None
    recon = codec(wave)
    loss = (recon - wave).abs().mean() + sum(torch.relu(1 - d(recon)).mean() for d in discriminators)
    loss.backward()
    optim.step()
    optim.zero_grad()

    if fixed:
        for o in discr_optims:
            o.zero_grad()                                        # the fix
    recon = codec(wave).detach()
    used, wanted = [], []
    for d in discriminators:
        discr_loss = torch.relu(1 + d(recon)).mean() + torch.relu(1 - d(wave)).mean()
        wanted.append(torch.autograd.grad(discr_loss, d.weight, retain_graph=True)[0])
        discr_loss.backward()
    for d, o in zip(discriminators, discr_optims):
        used.append(d.weight.grad.clone())                       # what o.step() applies
        o.step()
        if not fixed:
            o.zero_grad()                                        # buggy: zeroed only after the step
    return used, wanted


used, wanted = train_step(False)
assert all(not torch.allclose(u, w) for u, w in zip(used, wanted))   # buggy: generator-loss gradient leaks in
used, wanted = train_step(True)
assert all(torch.allclose(u, w) for u, w in zip(used, wanted))

print("CONFIRMED")
