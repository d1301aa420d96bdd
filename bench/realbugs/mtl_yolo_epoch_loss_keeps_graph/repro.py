"""Reproduction for `mtl_yolo_epoch_loss_keeps_graph`: MultimediaTechLab/YOLO commit 17eb6b7 ("Fixes memory leak").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `train_one_batch` returns the loss dict whose values are the (undetached) loss terms, and `train_one_epoch`
accumulates `total_loss[loss_name] += loss_val * batch_size` into a `defaultdict(lambda: torch.tensor(0.0))`, so each
epoch total holds a grad_fn chaining every batch's graph for the whole epoch (memory leak); the fix accumulates
`float(loss_val * batch_size)`.
"""

from collections import defaultdict

import torch

model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def graphs_kept(t):
    seen, stack, n = set(), [t.grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        n += type(fn).__name__.startswith("Addmm")
        stack.extend(f for f, _ in fn.next_functions)
    return n


def train_one_batch(x):
    opt.zero_grad()
    box = model(x).pow(2).mean()
    loss_dict = {"BoxLoss": 7.5 * box}
    loss = sum(loss_dict.values())
    loss.backward()
    opt.step()
    return loss_dict


def train_one_epoch(fixed):
    total_loss = defaultdict(lambda: torch.tensor(0.0))
    for _ in range(4):
        loss_each = train_one_batch(torch.randn(2, 4))
        for name, loss_val in loss_each.items():
            if fixed:
                total_loss[name] += float(loss_val * 2)
            else:
                total_loss[name] += loss_val * 2     # buggy
    return total_loss["BoxLoss"]


buggy = train_one_epoch(False)
assert buggy.grad_fn is not None and graphs_kept(buggy) == 4     # every batch's graph is still alive
fixed = train_one_epoch(True)
assert fixed.grad_fn is None

print("CONFIRMED")
