"""Reproduction for `tcn_copymem_missing_zero_grad`: locuslab/TCN 0a93cfd (added missing zero_grad).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


def train(fixed):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)   # lr 0: only look at the gradients
    for batch_idx in range(3):
        x = torch.randn(4, 3)
        y = torch.randint(0, 2, (4,))
        if fixed:
            optimizer.zero_grad()
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
        loss.backward()
        optimizer.step()
        fresh = torch.autograd.grad(torch.nn.functional.cross_entropy(model(x), y), model.weight)[0]
        if batch_idx == 2:
            return torch.allclose(model.weight.grad, fresh)


assert not train(False)     # the grad holds the sum of three batches
assert train(True)
print("CONFIRMED")
