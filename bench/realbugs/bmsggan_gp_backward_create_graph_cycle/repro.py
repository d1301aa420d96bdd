"""Reproduction for `bmsggan_gp_backward_create_graph_cycle`: akanimax/BMSG-GAN 4522d677 (wgan-gp memory leak fix).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import gc
import weakref

import torch
import torch.nn as nn

torch.manual_seed(0)
dis = nn.Sequential(nn.Conv2d(3, 4, 3), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(4 * 6 * 6, 1))


def penalty(fixed, refs):
    real, fake = torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8)
    epsilon = torch.rand((2, 1, 1, 1))
    merged = (epsilon * real) + ((1 - epsilon) * fake)
    merged.requires_grad = True
    op = dis(merged)
    if fixed:
        gradient = torch.autograd.grad(outputs=op, inputs=merged, grad_outputs=torch.ones_like(op),
                                       create_graph=True, retain_graph=True, only_inputs=True)[0]
    else:
        op.backward(gradient=torch.ones_like(op), create_graph=True)   # buggy
        gradient = merged.grad
    refs.append(weakref.ref(merged))
    gradient = gradient.view(gradient.shape[0], -1)
    return 10 * ((gradient.norm(p=2, dim=1) - 1) ** 2).mean()


def alive(fixed):
    refs = []
    for _ in range(5):
        dis.zero_grad(set_to_none=True)
        p = penalty(fixed, refs)
        p.backward()
        del p
    dis.zero_grad(set_to_none=True)
    gc.collect()
    return sum(r() is not None for r in refs)


import warnings
warnings.simplefilter("ignore")
assert alive(False) == 5, alive(False)     # every call's merged input (and its graph) survives: a reference cycle
assert alive(True) == 0
print("CONFIRMED")
