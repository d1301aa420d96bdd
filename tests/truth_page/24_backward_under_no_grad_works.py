import torch

x = torch.ones(3, requires_grad=True)
y = (x ** 2).sum()
with torch.no_grad():
    y.backward()
