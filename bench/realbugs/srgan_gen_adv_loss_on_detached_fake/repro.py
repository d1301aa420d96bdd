"""Reproduction for `srgan_gen_adv_loss_on_detached_fake`: leftthomas/SRGAN 4cde7ed8 (fix detach error).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Conv2d(3, 3, 3, padding=1), nn.Sigmoid())
netD = nn.Sequential(nn.Conv2d(3, 1, 3, padding=1), nn.Sigmoid())
mse = nn.MSELoss()


def generator_criterion(out_labels, out_images, target_images):
    adversarial_loss = torch.mean(1 - out_labels)
    image_loss = mse(out_images, target_images)
    return image_loss + 0.001 * adversarial_loss


z, real_img = torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8)


def g_grad(fixed):
    netG.zero_grad()
    fake_img = netG(z)
    fake_out = (netD(fake_img) if fixed else netD(fake_img.detach())).mean()
    g_loss = generator_criterion(fake_out, fake_img, real_img)
    g_loss.backward(retain_graph=not fixed)
    return netG[0].weight.grad.clone()


def content_only_grad():
    netG.zero_grad()
    mse(netG(z), real_img).backward()
    return netG[0].weight.grad.clone()


assert torch.allclose(g_grad(False), content_only_grad())        # buggy: the adversarial term gives G nothing
assert not torch.allclose(g_grad(True), content_only_grad())
print("CONFIRMED")
