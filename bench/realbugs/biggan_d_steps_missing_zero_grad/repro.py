"""Reproduction for `biggan_d_steps_missing_zero_grad`: ajbrock/BigGAN-PyTorch commit b70f16c4 ("fix D.optim.zero_grad() typo").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `D.optim.zero_grad()` is called once before the loop over `num_D_steps`, so with several D steps each
`D.optim.step()` applies the sum of the gradients of all earlier D steps; the fix zeroes at the start of each D step.
"""

import torch

D = torch.nn.Linear(1, 1, bias=False)
opt = torch.optim.SGD(D.parameters(), lr=0.0)   # lr 0: each step's own gradient is the same


def train(fixed, num_D_steps=3, num_D_accumulations=1):
    seen = []
    opt.zero_grad()                               # D.optim.zero_grad() at the top of train()
    for step_index in range(num_D_steps):
        if fixed:
            opt.zero_grad()                       # the fix
        for accumulation_index in range(num_D_accumulations):
            D_loss = D(torch.ones(1, 1)).sum() / float(num_D_accumulations)
            D_loss.backward()
        seen.append(D.weight.grad.item())
        opt.step()
    return seen


assert train(False) == [1.0, 2.0, 3.0]           # buggy: later D steps see stale gradients
assert train(True) == [1.0, 1.0, 1.0]

print("CONFIRMED")
