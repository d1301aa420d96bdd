"""Reproduction for `slip_meter_update_keeps_graph`: facebookresearch/SLIP 5dc590e6 (Fixed memory leak on loss accumulation).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


class AverageMeter(object):          # as in SLIP's main.py
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def count_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        stack.extend(f for f, _ in n.next_functions)
    return len(seen)


def run(fixed, steps):
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    metrics = {'loss': AverageMeter()}
    for _ in range(steps):
        loss_dict = {'loss': model(torch.randn(4, 8)).pow(2).mean()}
        opt.zero_grad()
        loss_dict['loss'].backward()
        opt.step()
        for k in loss_dict:
            metrics[k].update(loss_dict[k].item() if fixed else loss_dict[k], 4)
    return metrics['loss'].sum


s5, s30 = run(False, 5), run(False, 30)
assert torch.is_tensor(s30) and s30.requires_grad
assert count_nodes(s30) > count_nodes(s5) + 50       # the running sum chains every step's graph
assert isinstance(run(True, 30), float)
print("CONFIRMED")
