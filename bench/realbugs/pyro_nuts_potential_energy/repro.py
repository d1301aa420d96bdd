"""Reproduction for `pyro_nuts_potential_energy`: pyro-ppl/pyro commit e5470f5972 ("NUTS: detach `potential_energy`'s from the computation graph (#1914)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `_potential_grad` returns `potential_energy` with its graph; NUTS keeps it in the trajectory tree, so every leapfrog step's graph stays alive; the fix returns `.detach()`.
"""

import torch

def potential_grad(z, detach):
    z = z.detach().requires_grad_(True)
    potential_energy = (z ** 2).sum()
    grads = torch.autograd.grad(potential_energy, [z])
    return grads, (potential_energy.detach() if detach else potential_energy)

tree = [potential_grad(torch.randn(3), detach=False)[1] for _ in range(3)]
assert all(e.grad_fn is not None for e in tree)    # each kept energy holds its graph
tree = [potential_grad(torch.randn(3), detach=True)[1] for _ in range(3)]
assert all(e.grad_fn is None for e in tree)

print("CONFIRMED")
