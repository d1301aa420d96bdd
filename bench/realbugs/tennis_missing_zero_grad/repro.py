"""Reproduction for `tennis_missing_zero_grad`: yastrebksv/TennisCourtDetector commit e5cd4f1ce2 ("added optimizer.zero_grad").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `train(model, train_loader, optimizer, ...)` calls `loss.backward()` and `optimizer.step()` per batch and never zeroes the gradients, so they accumulate across steps; the fix adds `optimizer.zero_grad()` after the step.
"""

import torch

model = torch.nn.Linear(1, 1, bias=False)
opt = torch.optim.SGD(model.parameters(), lr=0.0)   # lr 0 keeps the weight, so each step's own gradient is equal


def run(zero):
    model.weight.grad = None
    seen = []
    for _ in range(3):
        if zero:
            opt.zero_grad()                              # the fix
        loss = model(torch.ones(1, 1)).sum()
        loss.backward()
        opt.step()
        seen.append(model.weight.grad.item())
    return seen


assert run(False) == [1.0, 2.0, 3.0]                    # buggy: the step sees the sum of all earlier gradients
assert run(True) == [1.0, 1.0, 1.0]

print("CONFIRMED")
