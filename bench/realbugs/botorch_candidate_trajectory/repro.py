"""Reproduction for `botorch_candidate_trajectory`: pytorch/botorch commit b20eee7e00 ("ensure candidate path is detached").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `param_trajectory["candidates"].append(candidates.clone())` stores a clone that stays attached to the optimised leaf through `CloneBackward`, keeping a graph per iteration; the fix appends `.clone().detach()`.
"""

import torch

candidates = torch.randn(2, 3, requires_grad=True)
trajectory = {"candidates": []}
trajectory["candidates"].append(candidates.clone())          # buggy
assert trajectory["candidates"][0].grad_fn is not None       # CloneBackward keeps it attached
trajectory["candidates"].append(candidates.clone().detach())  # the fix
assert trajectory["candidates"][1].grad_fn is None

print("CONFIRMED")
