import torch

x = torch.randn(3)
y = (x * 2).sum()
y.backward()
