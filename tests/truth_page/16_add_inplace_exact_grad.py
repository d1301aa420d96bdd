import torch

x = torch.randn(10, requires_grad=True)
y = x * 2
y.add_(x)
loss = y.sum()
loss.backward()
