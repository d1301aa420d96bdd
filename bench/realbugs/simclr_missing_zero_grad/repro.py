"""Reproduction for `simclr_missing_zero_grad`: sthalles/SimCLR commit af77a03 ("fixed bug missing zero_grad()").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the training loop calls `loss.backward()` and `optimizer.step()` for every batch but never
`optimizer.zero_grad()`, so each step applies the sum of all earlier batches' gradients; the fix
zeroes the gradients at the start of each step.
"""

import torch

model = torch.nn.Linear(1, 1, bias=False)
optimizer = torch.optim.Adam(model.parameters(), 0.0)   # lr 0 keeps the weight, so each batch's own gradient is equal


def train(fixed):
    model.weight.grad = None
    seen = []
    for _ in range(3):
        if fixed:
            optimizer.zero_grad()                          # the fix
        loss = model(torch.ones(1, 1)).sum()
        loss.backward()
        optimizer.step()
        seen.append(model.weight.grad.item())
    return seen


assert train(False) == [1.0, 2.0, 3.0]                   # buggy: gradients pile up across batches
assert train(True) == [1.0, 1.0, 1.0]

print("CONFIRMED")
