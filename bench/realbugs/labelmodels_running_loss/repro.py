"""Reproduction for `labelmodels_running_loss`: BatsResearch/labelmodels commit 3801b62992 ("Fix memory leak.").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `running_loss += loss` after `loss.backward()` and `optimizer.step()` in the batch loop keeps every batch's graph alive for the epoch (GPU out of memory on large sets); the fix adds `loss.item()`.
"""

import torch

model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)

def run(item):
    running_loss = 0.0
    for _ in range(3):
        opt.zero_grad()
        loss = model(torch.randn(2, 3)).pow(2).mean()
        loss.backward()
        opt.step()
        running_loss += loss.item() if item else loss
    return running_loss

assert run(False).grad_fn is not None        # the running total holds every batch's graph
assert isinstance(run(True), float)

print("CONFIRMED")
