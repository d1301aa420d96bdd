"""Reproduction for `cyclegan_gen_gan_loss_on_detached_fake`: Lornatang/CycleGAN-PyTorch bd898e14 (No longer training generator when training discriminator).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn as nn

torch.manual_seed(0)
netG_A2B, netG_B2A = nn.Conv2d(3, 3, 3, padding=1), nn.Conv2d(3, 3, 3, padding=1)
netD_A, netD_B = nn.Conv2d(3, 1, 4), nn.Conv2d(3, 1, 4)
adversarial_loss, cycle_loss = nn.MSELoss(), nn.L1Loss()
real_image_A, real_image_B = torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8)


def g_grad(fixed, with_gan=True):
    netG_A2B.zero_grad()
    fake_image_A = netG_B2A(real_image_B)
    fake_image_B = netG_A2B(real_image_A)
    fake_output_A = netD_A(fake_image_A if fixed else fake_image_A.detach())
    fake_output_B = netD_B(fake_image_B if fixed else fake_image_B.detach())
    real_label = torch.ones_like(fake_output_B)
    loss_GAN = adversarial_loss(fake_output_A, real_label) + adversarial_loss(fake_output_B, real_label)
    loss_cycle = cycle_loss(netG_B2A(fake_image_B), real_image_A) * 10.0
    (loss_GAN * with_gan + loss_cycle).backward()
    return netG_A2B.weight.grad.clone()


no_gan = g_grad(True, with_gan=False)
assert torch.allclose(g_grad(False), no_gan)          # buggy: the GAN loss gives the generators nothing
assert not torch.allclose(g_grad(True), no_gan)
print("CONFIRMED")
