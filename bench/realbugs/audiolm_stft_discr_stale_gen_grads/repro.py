"""Reproduction for `audiolm_stft_discr_stale_gen_grads`: lucidrains/audiolm-pytorch commit 5058cc446b ("address two bugs, thanks to @apoorv2904  in issue https://github.com/lucidrains/audiolm-pytorch/issues/48").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the SoundStream generator loss includes `hinge_gen_loss(stft_fake_logits)` from the STFT discriminator,
so its backward also fills the STFT discriminator's `.grad`; `self.optim` holds only the non-discriminator
parameters, and `self.discr_optim.zero_grad()` ran only after `self.discr_optim.step()`, so each STFT
discriminator step applies the generator-loss gradient as well; the fix zeroes before the discriminator backward.
"""

import torch

torch.manual_seed(0)
vae = torch.nn.Linear(4, 4)                               # stands for the SoundStream encoder/decoder
discr = torch.nn.Linear(4, 1)                             # stands for the STFT discriminator
optim = torch.optim.SGD(vae.parameters(), lr=0.0)          # VAE parameters only, as in the trainer
discr_optim = torch.optim.SGD(discr.parameters(), lr=0.0)  # lr 0: we only look at the gradient the step uses
img = torch.randn(8, 4)


def train_step(fixed):
    for p in (*vae.parameters(), *discr.parameters()):
        p.grad = None
    # update vae (generator): the adversarial term runs through the discriminator
    fmap = vae(img)
    loss = (fmap - img).pow(2).mean() + torch.relu(1 - discr(fmap)).mean()
    loss.backward()
    optim.step()
    optim.zero_grad()
    # update discriminator
    if fixed:
        discr_optim.zero_grad()                              # the fix
    fmap = vae(img).detach()
    discr_loss = torch.relu(1 + discr(fmap)).mean() + torch.relu(1 - discr(img)).mean()
    wanted = torch.autograd.grad(discr_loss, discr.weight, retain_graph=True)[0]
    discr_loss.backward()
    used = discr.weight.grad.clone()                        # what discr_optim.step() applies
    discr_optim.step()
    if not fixed:
        discr_optim.zero_grad()                              # buggy: zeroed only after the step
    return used, wanted


used, wanted = train_step(False)
assert not torch.allclose(used, wanted)                    # buggy: the step also applies the generator-loss gradient
used, wanted = train_step(True)
assert torch.allclose(used, wanted)

print("CONFIRMED")
