import torch

w = torch.randn(3, requires_grad=True)
before = w.detach().clone()
loss = (w ** 2).sum()
loss.backward()
with torch.no_grad():
    w -= 0.1 * w.grad
    w[0] = 0.0
