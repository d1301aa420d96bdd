import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 15))
D = nn.Sequential(nn.Linear(15, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
opt_g = torch.optim.Adam(G.parameters(), lr=1e-4)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-4)
real = torch.randn(8, 15)
fake = G(torch.randn(8, 5))
prob_real = D(real)
prob_fake = D(fake)
d_loss = -torch.mean(torch.log(prob_real) + torch.log(1.0 - prob_fake))
g_loss = torch.mean(torch.log(1.0 - prob_fake))
opt_d.zero_grad()
d_loss.backward(retain_graph=True)
opt_d.step()  # root cause: updates D's weights in place; g_loss's graph saved them
opt_g.zero_grad()
g_loss.backward()  # root cause: the saved D weights are at a newer version
opt_g.step()
