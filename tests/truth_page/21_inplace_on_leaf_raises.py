import torch

w = torch.randn(3, requires_grad=True)
loss = (w ** 2).sum()
loss.backward()
w -= 0.1 * w.grad
