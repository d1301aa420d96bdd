import torch

x = torch.randn(3, requires_grad=True)


def scale(t):
    out = t * 2
    out.requires_grad = True
    return out


y = scale(x)
