import torch
import torch.nn as nn

torch.manual_seed(0)
backbone = nn.Linear(6, 4)
head = nn.Linear(4, 1)
opt = torch.optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=0.1)


def encode(x):
    memory = torch.relu(backbone(x))
    return memory.detach()  # root cause: cuts the backbone out of every loss built on encode()


feats = encode(torch.randn(5, 6))
loss = head(feats).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
