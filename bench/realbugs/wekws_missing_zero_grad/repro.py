"""Reproduction for `wekws_missing_zero_grad`: wenet-e2e/wekws commit 141d40704f ("[fix bug] add optimizer.zero_grad() in  kws/utils/executor.py (#72) (#").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The executor's training loop calls `loss.backward()` and `optimizer.step()` but never `optimizer.zero_grad()`, so every step applies the sum of all earlier gradients; the fix zeroes before backward.
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
