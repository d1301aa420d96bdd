"""Reproduction for `torchforge_sft_zero_grad_once`: meta-pytorch/torchforge commit 2d63c6d1 ("[ez] zero grad every step").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the SFT recipe calls `self.optimizers.zero_grad()` once in `train()` before the loop, while `train_step`
does forward/backward and `optimizers.step()` every iteration; gradients therefore accumulate across all steps
and each update uses the sum of every past batch's gradient. The fix zeroes the grads at the start of each step.
"""

import torch

torch.manual_seed(0)
batches = [(torch.randn(8, 3), torch.randn(8, 1)) for _ in range(3)]


def train(fixed):
    torch.manual_seed(1)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    used = []
    if not fixed:
        opt.zero_grad()                                   # buggy: once, before the loop
    for x, y in batches:                                  # train_step
        if fixed:
            opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        used.append(model.weight.grad.clone())
        opt.step()
    return model, used


model, buggy = train(False)
per_batch = []
for x, y in batches:
    g, = torch.autograd.grad(((model(x) - y) ** 2).mean(), model.weight)
    per_batch.append(g)
assert torch.allclose(buggy[2], per_batch[0] + per_batch[1] + per_batch[2])   # stale grads summed in
_, fixed = train(True)
assert all(torch.allclose(a, b) for a, b in zip(fixed, per_batch))

print("CONFIRMED")
