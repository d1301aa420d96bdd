"""Reproduction for `caikit_step_loss_log`: caikit/caikit-nlp commit c2610428a6 (":bug: Fix loss tensor to float conversion").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `step_loss_log[step_count] = loss` stores each step's loss with its graph in a dict that lives for the whole training; the fix stores a float.
"""

import torch

model = torch.nn.Linear(3, 1)
step_loss_log = {}
for step_count in range(3):
    loss = model(torch.randn(2, 3)).pow(2).mean()
    loss.backward()
    step_loss_log[step_count] = loss                  # buggy
assert all(v.grad_fn is not None for v in step_loss_log.values())
step_loss_log = {0: loss.detach().float().item()}     # the fix
assert isinstance(step_loss_log[0], float)

print("CONFIRMED")
