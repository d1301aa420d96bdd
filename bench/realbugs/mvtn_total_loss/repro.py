"""Reproduction for `mvtn_total_loss`: ajhamdi/MVTN commit 4c5da6b094 ("fixed memory leakage issue #2").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `total_loss += loss` in the training (and evaluation) loops keeps every batch's graph alive; the process runs out of memory in the second epoch; the fix adds `loss.item()`.
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
