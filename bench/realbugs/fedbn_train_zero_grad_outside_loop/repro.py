"""Reproduction for `fedbn_train_zero_grad_outside_loop`: med-air/FedBN e45fa6f0 (fix).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn as nn

torch.manual_seed(0)
batches = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(3)]


def train(fixed):
    torch.manual_seed(1)
    model = nn.Linear(6, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    loss_fun = nn.CrossEntropyLoss()
    applied = []
    if not fixed:
        optimizer.zero_grad()
    for x, y in batches:
        if fixed:
            optimizer.zero_grad()
        loss = loss_fun(model(x), y)
        loss.backward()
        applied.append(model.weight.grad.clone())
        optimizer.step()
    return applied


f, b = train(True), train(False)
assert torch.allclose(b[2], f[0] + f[1] + f[2]) and not torch.allclose(b[2], f[2])
print("CONFIRMED")
