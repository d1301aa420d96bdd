import torch
from torch.func import grad

torch.manual_seed(0)


def per_sample_loss(w, x, y):
    return (x @ w - y) ** 2  # root cause: returns one loss per sample, not a scalar


w = torch.randn(3)
x = torch.randn(5, 3)
y = torch.randn(5)
g = grad(per_sample_loss)(w, x, y)
