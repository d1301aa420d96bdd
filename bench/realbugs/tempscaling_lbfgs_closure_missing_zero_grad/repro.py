"""Reproduction for `tempscaling_lbfgs_closure_missing_zero_grad`: gpleiss/temperature_scaling 126a5097 (Zero gradient in LBFGS optimizer).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
logits = torch.randn(200, 5) * 3
labels = torch.randint(0, 5, (200,))
nll_criterion = nn.CrossEntropyLoss()


def fit(fixed):
    temperature = nn.Parameter(torch.ones(1) * 1.5)
    optimizer = optim.LBFGS([temperature], lr=0.01, max_iter=50)
    grads = []

    def eval():
        if fixed:
            optimizer.zero_grad()
        loss = nll_criterion(logits / temperature, labels)
        loss.backward()
        grads.append((temperature.item(), temperature.grad.item()))
        return loss
    optimizer.step(eval)
    return temperature.item(), grads


def true_grad(t):
    t = torch.tensor([t], requires_grad=True)
    nll_criterion(logits / t, labels).backward()
    return t.grad.item()


tb, gb = fit(False)
tf, gf = fit(True)
assert len(gb) > 2 and all(abs(g - true_grad(t)) < 1e-4 for t, g in gf)            # fixed: each closure call sees its own gradient
assert abs(gb[1][1] - (true_grad(gb[0][0]) + true_grad(gb[1][0]))) < 1e-4           # buggy: the 2nd call sees the sum of both
assert abs(tb - tf) > 1e-4                                                 # a different temperature comes out
print("CONFIRMED")
