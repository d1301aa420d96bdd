"""Reproduction for `skorch_rnn_example_missing_zero_grad`: skorch-dev/skorch commit 7d368879 ("Reset gradients for each batch in RNN example").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the example overrides `train_step` (dropping the base class's `optimizer.zero_grad()`) and updates
`p.data.add_(-lr, p.grad.data)` after `loss.backward()`, so every batch applies the sum of all earlier gradients; the
fix calls `self.module_.zero_grad()` at the start of the step.
"""

import torch

module = torch.nn.Linear(1, 1, bias=False)


def train(fixed, lr=0.0):
    module.zero_grad(set_to_none=True)
    seen = []
    for _ in range(3):
        if fixed:
            module.zero_grad()                    # the fix
        loss = module(torch.ones(1, 1)).sum()
        loss.backward()
        for p in module.parameters():
            p.data.add_(p.grad.data, alpha=-lr)
        seen.append(module.weight.grad.item())
    return seen


assert train(False) == [1.0, 2.0, 3.0]           # buggy: gradients accumulate across batches
assert train(True) == [1.0, 1.0, 1.0]

print("CONFIRMED")
