import torch

torch.manual_seed(0)
x = torch.randn(3)
x.requires_grad = True
loss = (x ** 2).sum()
loss.backward()
