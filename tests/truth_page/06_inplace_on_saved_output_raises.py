import torch

x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
y += 1
loss = y.sum()
loss.backward()
