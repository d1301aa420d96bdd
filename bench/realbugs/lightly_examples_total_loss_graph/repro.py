"""Reproduction for `lightly_examples_total_loss_graph`: lightly-ai/lightly commit 9afcd667 ("Detach loss when calculating total").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `total_loss += loss` in the examples' epoch loop makes the running total a tensor whose grad_fn
chains every batch's graph of the epoch, so all of them stay alive until the epoch ends; the fix
accumulates `loss.detach()`.
"""

import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def chained_graphs(t):
    """How many per-batch loss graphs (MeanBackward nodes) are reachable from t."""
    seen, stack, n = set(), [t.grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        n += type(fn).__name__.startswith("MeanBackward")
        stack.extend(f for f, _ in fn.next_functions)
    return n


def epoch(fixed):
    total_loss = 0
    for _ in range(4):
        loss = model(torch.randn(2, 3)).pow(2).mean()
        total_loss += loss.detach() if fixed else loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return total_loss


buggy = epoch(False)
assert buggy.requires_grad and chained_graphs(buggy) == 4   # every batch's graph is kept alive
fixed = epoch(True)
assert not fixed.requires_grad and fixed.grad_fn is None

print("CONFIRMED")
