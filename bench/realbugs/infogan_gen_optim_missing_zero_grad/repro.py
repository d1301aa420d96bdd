"""Reproduction for `infogan_gen_optim_missing_zero_grad`: navneet-nmk/pytorch-rl a6a32527 (Fixed an important bug).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn as nn

torch.manual_seed(0)
generator, discriminator = nn.Linear(3, 4), nn.Linear(4, 1)
z_batches = [torch.randn(5, 3) for _ in range(3)]


def train(fixed):
    gen = nn.Linear(3, 4)
    gen.load_state_dict(generator.state_dict())
    dis_optim = torch.optim.SGD(discriminator.parameters(), lr=0.0)
    gen_optim = torch.optim.SGD(gen.parameters(), lr=0.0)
    applied = []
    for z in z_batches:
        dis_optim.zero_grad()
        fake_x = gen(z)
        discriminator(fake_x.detach()).mean().backward()
        dis_optim.step()
        if fixed:
            gen_optim.zero_grad()
        G_loss = -discriminator(fake_x).mean()
        G_loss.backward()
        applied.append(gen.weight.grad.clone())
        gen_optim.step()
    return applied


f, b = train(True), train(False)
assert torch.allclose(b[2], f[0] + f[1] + f[2]) and not torch.allclose(b[2], f[2])
print("CONFIRMED")
