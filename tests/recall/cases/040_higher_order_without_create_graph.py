import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
(dy,) = torch.autograd.grad(y, x)  # root cause: without create_graph=True dy has no history
(d2y,) = torch.autograd.grad(dy, x)
