import torch
import torch.nn as nn

torch.manual_seed(0)
linear = nn.Linear(3, 3)
a = linear(torch.randn(2, 3))
expected = a.detach().sum(0)
b = torch.randn(3, requires_grad=True)
a *= b
a.sum().backward()
