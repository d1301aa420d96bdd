import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Linear(4, 4)
head = nn.Linear(4, 1)
opt = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
x = torch.randn(3, 4)
h = torch.tanh(encoder(x))
h_norm = h / h.norm(dim=1, keepdim=True)
loss = head(h_norm).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
