"""Reproduction for `botorch_stopping_criterion_fval`: pytorch/botorch commit d974542de8 ("Detach fval in torch_minimize to avoid memory leak").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `stopping_criterion(fval)` passes the loss with its graph to a criterion that stores values across iterations, so every optimisation step's graph is kept (memory leak); the fix passes `fval.detach()`.
"""

import torch

class Criterion:
    def __init__(self):
        self.history = []
    def __call__(self, fval):
        self.history.append(fval)
        return False

x = torch.nn.Parameter(torch.randn(3))
crit = Criterion()
for _ in range(3):
    fval = (x ** 2).sum()
    fval.backward()
    crit(fval)                                     # buggy
assert all(v.grad_fn is not None for v in crit.history)
crit = Criterion()
for _ in range(3):
    fval = (x ** 2).sum()
    crit(fval.detach())                            # the fix
assert all(v.grad_fn is None for v in crit.history)

print("CONFIRMED")
