import torch

w = torch.randn(3, requires_grad=True)
grad_before = w.grad
loss = (w ** 2).sum()
loss.backward()
