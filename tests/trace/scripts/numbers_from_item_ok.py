# expect: nothing (numbers from .item() used as a fixed target inside a square, as a scale, and for logging)
import torch
import torch.nn as nn

torch.manual_seed(0)
q_net = nn.Linear(4, 2)
opt = torch.optim.SGD(q_net.parameters(), lr=0.1)
running = 0.0
for step in range(3):
    s, s2 = torch.randn(1, 4), torch.randn(1, 4)
    target = 1.0 + 0.9 * q_net(s2).max().item()
    td = (q_net(s)[0, 0] - target) ** 2
    loss = td / max(td.item(), 1e-6)
    opt.zero_grad()
    loss.backward()
    opt.step()
    running += loss.item()
print("running:", round(running, 3))
