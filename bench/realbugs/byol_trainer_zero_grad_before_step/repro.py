"""Reproduction for `byol_trainer_zero_grad_before_step`: lucidrains/byol-pytorch 0c3ab54 (address issue 93).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


def train(fixed):
    torch.manual_seed(0)
    byol = torch.nn.Linear(3, 3)
    before = byol.weight.detach().clone()
    optimizer = torch.optim.Adam(byol.parameters(), lr=0.1)
    for _ in range(3):
        loss = byol(torch.randn(4, 3)).pow(2).mean()
        loss.backward()                                   # accelerator.backward(loss)
        if fixed:
            optimizer.step()
            optimizer.zero_grad()
        else:
            optimizer.zero_grad()                         # buggy: gradients gone before the step
            optimizer.step()
    return torch.equal(before, byol.weight.detach())


assert train(False)          # the weights never change
assert not train(True)
print("CONFIRMED")
