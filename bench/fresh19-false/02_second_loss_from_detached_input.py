"""fresh19 (false): GS416 mkocabas/VIBE `lib/core/trainer.py:186`.

    gen_loss, motion_dis_loss, loss_dict = self.criterion(generator_outputs=preds, ...,
                                                          motion_discriminator=self.motion_discriminator)
    self.gen_optimizer.zero_grad(); gen_loss.backward(); self.gen_optimizer.step()
    if self.train_global_step % self.dis_motion_update_steps == 0:
        self.dis_motion_optimizer.zero_grad(); motion_dis_loss.backward(); self.dis_motion_optimizer.step()

In `VIBELoss.forward` the two losses share no graph node: `gen_loss` runs the discriminator on `pred_motion`, while
`motion_dis_loss` runs it again on `fake_motion = pred_motion.detach()` and on the real motion, a separate forward
whose graph the first backward does not free. (The motion discriminator is a GRU with an optional `spectral_norm`
Linear; both variants run here.) Runs cleanly.
"""
import torch
import torch.nn as nn
from torch.nn.utils import spectral_norm


class MotionDiscriminator(nn.Module):
    def __init__(self, sn):
        super().__init__()
        self.gru = nn.GRU(6, 8)
        self.fc = spectral_norm(nn.Linear(8, 1)) if sn else nn.Linear(8, 1)

    def forward(self, seq):
        out, _ = self.gru(seq.transpose(0, 1))
        return self.fc(out[-1])


def criterion(preds, real_motion, disc):
    pred_motion = preds
    gen_loss = ((preds - 1) ** 2).mean()
    e_motion_disc_loss = torch.sum((disc(pred_motion) - 1.0) ** 2) / len(pred_motion)
    fake_motion = pred_motion.detach()
    fake, real = disc(fake_motion), disc(real_motion)
    d_loss = torch.sum(fake ** 2) / len(fake) + torch.sum((real - 1) ** 2) / len(real)
    return gen_loss + e_motion_disc_loss, d_loss


for sn in (False, True):
    torch.manual_seed(0)
    gen, disc = nn.Linear(4, 6), MotionDiscriminator(sn)
    gen_opt, dis_opt = torch.optim.Adam(gen.parameters()), torch.optim.Adam(disc.parameters())
    for step in range(3):
        preds = gen(torch.randn(2, 5, 4))
        gen_loss, motion_dis_loss = criterion(preds, torch.randn(2, 5, 6), disc)
        gen_opt.zero_grad(); gen_loss.backward(); gen_opt.step()
        dis_opt.zero_grad(); motion_dis_loss.backward(); dis_opt.step()
    print(f"spectral_norm={sn}: three steps, both backwards ran")
