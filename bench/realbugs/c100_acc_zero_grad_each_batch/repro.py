"""Reproduction for `c100_acc_zero_grad_each_batch`: weiaicunzai/pytorch-cifar100 commit 92a3323c ("fix: use zero_grad after accumulate gradients").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: with gradient accumulation (`continue` until `acc_b` batches have been seen) the loop still calls
`optimizer.zero_grad()` before every forward, so the accumulated gradients of the earlier batches are discarded and
the step uses only the last batch; the fix zeroes after `optimizer.step()`.
"""

import torch

net = torch.nn.Linear(1, 1, bias=False)
optimizer = torch.optim.SGD(net.parameters(), lr=0.0)
batches = [torch.tensor([[1.0]]), torch.tensor([[3.0]])]   # per-batch gradients 1 and 3


def epoch(fixed, acc_b=2):
    net.weight.grad = None
    acc_batches = acc_b
    stepped_with = []
    for images in batches:
        if not fixed:
            optimizer.zero_grad()                 # buggy: before every forward
        scaled_loss = net(images).sum() / (acc_b if fixed else 1)
        scaled_loss.backward()
        if acc_batches > 1:
            acc_batches -= 1
            continue
        stepped_with.append(net.weight.grad.item())
        optimizer.step()
        if fixed:
            optimizer.zero_grad()                 # the fix
    return stepped_with


assert epoch(False) == [3.0]                     # buggy: only the last batch's gradient
assert epoch(True) == [2.0]                      # fixed: the mean over both accumulated batches

print("CONFIRMED")
