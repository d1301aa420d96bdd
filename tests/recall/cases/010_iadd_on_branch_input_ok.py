import torch
import torch.nn as nn

torch.manual_seed(0)
conv1 = nn.Linear(4, 4)
conv1_p = nn.Linear(4, 2)
skip = torch.randn(3, 4)
inp = torch.randn(3, 4)
x = conv1(inp)
x_p = conv1_p(x)
x = x + skip
loss = x.sum() + x_p.sum()
loss.backward()
