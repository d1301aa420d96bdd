import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Linear(4, 6)
D = nn.Sequential(nn.Linear(6, 1), nn.Sigmoid())
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCELoss()
ones, zeros = torch.ones(8, 1), torch.zeros(8, 1)
real = torch.randn(8, 6)
fake = G(torch.randn(8, 4))
d_loss = bce(D(real), ones) + bce(D(fake), zeros)  # root cause: fake not detached for the D step
opt_d.zero_grad()
d_loss.backward()
opt_d.step()
g_loss = bce(D(fake), ones)
opt_g.zero_grad()
g_loss.backward()  # root cause: backward into G's graph, already freed by d_loss.backward()
opt_g.step()
