import torch

x = torch.randn(10, requires_grad=True)
w = torch.randn(10, requires_grad=False)
y = x * w
loss = y.sum()
loss.backward()
