import torch

torch.manual_seed(0)
x = torch.randn(3)
x.require_grad = True  # root cause: typo, sets a plain Python attribute
loss = (x ** 2).sum()
loss.backward()
