import torch
import torch.nn as nn

torch.manual_seed(0)
layer = nn.Linear(3, 3)
x = layer(torch.randn(2, 3))
scale = torch.randn(3, requires_grad=True)
x[0] = x[0] * scale  # root cause: the mul saved x[0], then the assignment writes into x
x.sum().backward()
