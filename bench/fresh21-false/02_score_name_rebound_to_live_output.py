"""fresh21 false: TAMU-VITA/AutoGAN functions.py:57 and :137 (GS220).

Shape: one name holds the discriminator's score of *detached* fakes in the discriminator step and is then rebound to
the score of *live* fakes in the generator step of the same loop body; the generator loss is `-torch.mean(<name>)`.
`fake_imgs = gen_net(z).detach(); fake_validity = dis_net(fake_imgs)` feeds the hinge D loss (which should not reach
the generator); later `gen_imgs = gen_net(gen_z); fake_validity = dis_net(gen_imgs); g_loss =
-torch.mean(fake_validity)`. The backwarded `g_loss` is built from the undetached `gen_imgs`, so the generator gets its
gradient. gradsight matches the name `fake_validity` to the first (detached) assignment without following the
rebinding. The loop body of `train` (functions.py:122-165) with small nets.
"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
gen_net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 12), nn.Tanh())
dis_net = nn.Sequential(nn.Linear(12, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
gen_optimizer = torch.optim.Adam(gen_net.parameters(), lr=1e-3)
dis_optimizer = torch.optim.Adam(dis_net.parameters(), lr=1e-3)
real_imgs = torch.randn(4, 12)
z = torch.FloatTensor(np.random.normal(0, 1, (4, 8)))
dis_optimizer.zero_grad()
real_validity = dis_net(real_imgs)
fake_imgs = gen_net(z).detach()                                    # functions.py:137
fake_validity = dis_net(fake_imgs)
d_loss = torch.mean(nn.ReLU(inplace=True)(1.0 - real_validity)) + torch.mean(nn.ReLU(inplace=True)(1 + fake_validity))
d_loss.backward()
assert all(p.grad is None for p in gen_net.parameters())           # the D step leaves G alone, as intended
dis_optimizer.step()
gen_optimizer.zero_grad()
gen_z = torch.FloatTensor(np.random.normal(0, 1, (4, 8)))
gen_imgs = gen_net(gen_z)
fake_validity = dis_net(gen_imgs)
g_loss = -torch.mean(fake_validity)
g_loss.backward()
assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in gen_net.parameters())
gen_optimizer.step()
print("OK: the generator loss reaches the generator; the detached fakes only feed the discriminator loss")
