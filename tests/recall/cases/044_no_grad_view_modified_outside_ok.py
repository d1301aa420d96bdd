import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Linear(4, 4)
x = encoder(torch.randn(2, 4))
first = x[:, 0]
first.mul_(0.5)
x.sum().backward()
