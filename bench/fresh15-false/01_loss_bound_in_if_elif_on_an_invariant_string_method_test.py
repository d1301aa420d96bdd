"""fresh15 (false): GS402 RCAN `code/loss/adversarial.py:58` (both copies).

The discriminator loop of EDSR/RCAN's `Adversarial.forward`: `loss_d` is bound in `if self.gan_type == 'GAN':`
or `elif self.gan_type.find('WGAN') >= 0:` (no `else`), then `loss_d.backward()` in each of `gan_k` rounds.
Every round builds a new graph from `fake.detach()` and `real`; `self.gan_type` never changes in the loop, so a
round that took neither branch would find `loss_d` unbound in the first round already (NameError), never an
old, freed loss. Runs clean for both GAN types with gan_k=3.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Adv(nn.Module):
    def __init__(self, gan_type, gan_k):
        super().__init__()
        self.gan_type = gan_type
        self.gan_k = gan_k
        self.discriminator = nn.Linear(4, 1)
        self.optimizer = torch.optim.SGD(self.discriminator.parameters(), lr=0.1)

    def forward(self, fake, real):
        fake_detach = fake.detach()
        for _ in range(self.gan_k):
            self.optimizer.zero_grad()
            d_fake = self.discriminator(fake_detach)
            d_real = self.discriminator(real)
            if self.gan_type == 'GAN':
                loss_d = F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake))
            elif self.gan_type.find('WGAN') >= 0:
                loss_d = (d_fake - d_real).mean()
            loss_d.backward()
            self.optimizer.step()
        return -self.discriminator(fake).mean()


for t in ('GAN', 'WGAN'):
    fake = torch.randn(2, 4, requires_grad=True)
    Adv(t, 3)(fake, torch.randn(2, 4)).backward()
print("ok")
