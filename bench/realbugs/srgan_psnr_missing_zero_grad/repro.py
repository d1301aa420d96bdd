"""Reproduction for `srgan_psnr_missing_zero_grad`: Lornatang/SRGAN-PyTorch commit b7743b74bd ("Fix some error").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `train_psnr` runs `scaler.scale(loss).backward()` and `scaler.step(optimizer)` for every batch but never
zeroes the gradients, so each step applies the sum of all earlier batches' gradients; the fix calls
`model.zero_grad()` at the top of the loop.
"""

import torch

model = torch.nn.Linear(1, 1, bias=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)   # lr 0 keeps the weight, so every batch's own gradient is equal


def train_psnr(zero):
    model.weight.grad = None
    seen = []
    for _ in range(3):
        if zero:
            model.zero_grad()                                  # the fix
        sr = model(torch.ones(1, 1))
        loss = sr.sum()                                        # d loss / d weight = 1 for every batch
        loss.backward()
        optimizer.step()
        seen.append(model.weight.grad.item())
    return seen


buggy = train_psnr(False)
fixed = train_psnr(True)
assert buggy == [1.0, 2.0, 3.0], buggy                  # buggy: gradients pile up across batches
assert fixed == [1.0, 1.0, 1.0], fixed

print("CONFIRMED")
