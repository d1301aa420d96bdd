import torch

x = torch.randn(3)
w = torch.randn(3, requires_grad=True)
y = (x * w).sum()
(gx,) = torch.autograd.grad(y, x)
