# From thstkdgus35/EDSR-PyTorch src/loss/adversarial.py:71 (fresh10, first try of the engine at 1432d56).
# Finding: GS410 "This backward inside `forward` frees the caller's graph; its own backward then raises."
# Why wrong: the loss module's forward(fake, real) updates its discriminator first. The generator output is
# detached (`fake_detach = fake.detach()`) before the discriminator sees it, so the discriminator loss reaches the
# caller's graph only through `real`, the ground-truth high-resolution batch from the data loader (the trainer
# calls `self.loss(sr, hr)`), which carries no graph. The backward frees the discriminator's own graph only;
# the caller's `loss.backward()` (generator loss through `self.dis(fake)`, plus L1) runs. The rule takes every
# argument of forward as carrying the caller's graph. This program runs the gan_type 'GAN' and 'WGAN' paths of the
# real class for three steps (the 'RGAN' path is a different matter: see bench/fresh10-notes.md).
# A shorter VALID example of the same shape (no loss-module plumbing) is in bench/fresh10-notes.md.
# Side finding, not counted in the round: this reduced program (which uses torch.optim.Adam directly, where the
# repository's optimizer comes from a factory the engine cannot see) also draws GS308 at `self.optimizer.step()`
# ("... so the backward at line 36 raises"), also false: the program runs. GS308 goes away when
# `loss_d.backward(retain_graph=retain_graph)` becomes `loss_d.backward()`, or when the `if`/`elif` that picks
# `loss_d` by `self.gan_type` becomes one assignment: the engine seems to follow an iteration in which neither
# branch binds `loss_d` (so the previous iteration's loss, its graph possibly retained, is backwarded after the
# step), which cannot happen: `self.gan_type` does not change inside the loop.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Adversarial(nn.Module):
    def __init__(self, gan_type, gan_k=1):
        super().__init__()
        self.gan_type = gan_type
        self.gan_k = gan_k
        self.dis = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(8 * 8 * 8, 1))
        self.optimizer = torch.optim.Adam(self.dis.parameters(), lr=1e-4)

    def forward(self, fake, real):
        self.loss = 0
        fake_detach = fake.detach()     # do not backpropagate through G
        for _ in range(self.gan_k):
            self.optimizer.zero_grad()
            d_fake = self.dis(fake_detach)
            d_real = self.dis(real)
            retain_graph = False
            if self.gan_type == 'GAN':
                loss_d = self.bce(d_real, d_fake)
            elif self.gan_type.find('WGAN') >= 0:
                loss_d = (d_fake - d_real).mean()
            self.loss += loss_d.item()
            loss_d.backward(retain_graph=retain_graph)
            self.optimizer.step()
            if self.gan_type == 'WGAN':
                for p in self.dis.parameters():
                    p.data.clamp_(-1, 1)
        self.loss /= self.gan_k
        d_fake_bp = self.dis(fake)
        if self.gan_type == 'GAN':
            loss_g = F.binary_cross_entropy_with_logits(d_fake_bp, torch.ones_like(d_fake_bp))
        else:
            loss_g = -d_fake_bp.mean()
        return loss_g

    def bce(self, real, fake):
        return (F.binary_cross_entropy_with_logits(real, torch.ones_like(real))
                + F.binary_cross_entropy_with_logits(fake, torch.zeros_like(fake)))


for gan_type in ('GAN', 'WGAN'):
    generator = nn.Conv2d(3, 3, 3, padding=1)
    adversarial = Adversarial(gan_type)
    opt_g = torch.optim.Adam(generator.parameters(), lr=1e-4)
    for step in range(3):
        lr, hr = torch.randn(4, 3, 8, 8), torch.randn(4, 3, 8, 8)
        opt_g.zero_grad()
        sr = generator(lr)
        loss = F.l1_loss(sr, hr) + 1e-3 * adversarial(sr, hr)
        loss.backward()
        opt_g.step()
print("ok")
