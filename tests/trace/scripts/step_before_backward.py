# expect: GS901 line 14 (opt_d.step() changes D's weights that the forward at line 13 saved)
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Linear(2, 2)
D = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
real = torch.randn(8, 2)
d_loss = D(real).mean()
d_loss.backward()
fake = G(torch.randn(8, 2))
g_loss = -D(fake).mean()
opt_d.step()
g_loss.backward()
