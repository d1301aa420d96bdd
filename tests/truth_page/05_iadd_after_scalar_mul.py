import torch

x = torch.randn(3, requires_grad=True)
y = x * 2
y += 1
loss = y.sum()
loss.backward()
