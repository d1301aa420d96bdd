"""Reproduction for `drl_a3c_grad_alias`: p-christ/Deep-Reinforcement-Learning-Algorithms-with-PyTorch commit a8bd4f99f0 ("Update A3C.py").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The worker queues `[param.grad for param in ...]`, references to the live `.grad` tensors, which the next `zero_grad()`/`backward()` modify in place before the consumer applies them; the fix queues clones.
"""

import torch

model = torch.nn.Linear(3, 1)
model(torch.randn(2, 3)).sum().backward()
queued = [p.grad for p in model.parameters()]          # buggy: references to the live .grad
snapshot = [g.clone() for g in queued]
model(torch.randn(2, 3)).sum().backward()              # the worker's next backward accumulates in place
assert not torch.equal(queued[0], snapshot[0])         # what the consumer reads has changed
queued = [p.grad.clone() for p in model.parameters()]  # the fix
before = queued[0].clone()
model(torch.randn(2, 3)).sum().backward()
assert torch.equal(queued[0], before)

print("CONFIRMED")
