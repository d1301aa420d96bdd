"""Reproduction for `parlai_eval_step_grad_mode`: facebookresearch/ParlAI commit bddc7b125c ("with no_grad in evaluation step.").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `batch_act` calls `self.eval_step(batch)` in grad mode, so evaluation builds and keeps graphs (memory and compute); the fix runs it under `torch.no_grad()`.
"""

import torch

model = torch.nn.Linear(3, 1)
outputs = [model(torch.randn(2, 3)) for _ in range(3)]   # buggy: validation in grad mode
assert all(o.grad_fn is not None for o in outputs)      # every batch builds (and keeps) a graph
with torch.no_grad():                                   # the fix
    outputs = [model(torch.randn(2, 3)) for _ in range(3)]
assert all(o.grad_fn is None for o in outputs)

print("CONFIRMED")
