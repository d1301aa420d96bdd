"""One GAN training step with the classic mistake: the discriminator step uses `fake` without
`.detach()`, so `d_loss.backward()` frees the generator's graph and `g_loss.backward()` raises
"Trying to backward through the graph a second time" (GS402; the fix detaches on line 24)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2))
D = nn.Sequential(nn.Linear(2, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()


def sample_real(n):
    angle = torch.rand(n) * 6.2832
    return torch.stack([angle.cos(), angle.sin()], dim=1)


real = sample_real(128)
fake = G(torch.randn(128, 16))

opt_d.zero_grad()
d_loss = bce(D(real), torch.ones(128, 1)) + bce(D(fake), torch.zeros(128, 1))
d_loss.backward()
opt_d.step()

opt_g.zero_grad()
g_loss = bce(D(fake), torch.ones(128, 1))
g_loss.backward()
opt_g.step()
