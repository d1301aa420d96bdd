# Quiet with the base engine; runs under torch.
import torch


def attack(x):
    d = torch.zeros_like(x).uniform_(-1, 1).requires_grad_(True)
    loss = ((x + d) ** 2).sum()
    loss.backward()
    return d.grad


def main(x):
    with torch.no_grad():
        y = x + 1
    with torch.enable_grad():
        g = attack(y)
    return g


main(torch.randn(3))
