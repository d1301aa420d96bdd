"""Reproduction for `idinvert_missing_zero_grad_d`: Hsintien-Ng/idinvert_pytorch-reproduced commit cf33025105 ("fix zero_grad() on D").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The discriminator's `D_loss.backward()` runs without `optimizer_D.zero_grad()`, so D's gradients accumulate across iterations (and gradients left by the encoder's step through D add in); the fix zeroes D's gradients before its backward.
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
