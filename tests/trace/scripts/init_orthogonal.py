# expect: nothing (nn.init.orthogonal_ writes through a view made under no_grad; once an internal error)
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
for layer in net:
    if isinstance(layer, nn.Linear):
        nn.init.orthogonal_(layer.weight, gain=2 ** 0.5)
        nn.init.constant_(layer.bias, 0.0)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
for step in range(3):
    loss = net(torch.randn(4, 8)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("final loss", loss.item())
