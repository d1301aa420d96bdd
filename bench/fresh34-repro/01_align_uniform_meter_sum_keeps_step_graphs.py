"""fresh34 real: GS404 ssnl/align_uniform examples/stl10/util.py:24 (`self.sum += val * n`).

examples/stl10/main.py (and linear_eval.py) call `loss_meter.update(loss, x.shape[0])` with the loss tensor
itself, before `loss.backward()`. AverageMeter.update (verbatim below) adds `val * n` to `self.sum`, so the sum
is a tensor whose graph reaches every step's loss graph until `reset()` at the next epoch. This program runs
the main.py loop on a small encoder and counts the autograd nodes reachable from `loss_meter.sum`: they grow with
every step (by the size of one step's graph). The activations those nodes saved are freed by each
`loss.backward()` (no retain_graph), so what accumulates is the nodes and their metadata, not the activations.
"""
import gc

import torch
from torch import nn


class AverageMeter(object):
    def __init__(self, name=None, fmt='.6f'):
        fmtstr = f'{{val:{fmt}}} ({{avg:{fmt}}})'
        if name is not None:
            fmtstr = name + ' ' + fmtstr
        self.fmtstr = fmtstr
        self.reset()

    def reset(self):
        self.val = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n


def align_loss(x, y, alpha=2):
    return (x - y).norm(p=2, dim=1).pow(alpha).mean()


def uniform_loss(x, t=2):
    return torch.pdist(x, p=2).pow(2).mul(-t).exp().mean().log()


def nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        f = stack.pop()
        if f is None or f in seen:
            continue
        seen.add(f)
        stack.extend(g for g, _ in f.next_functions)
    return len(seen)


torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
optim = torch.optim.SGD(encoder.parameters(), lr=0.01)
loss_meter = AverageMeter('total_loss')
counts = []
for ii in range(5):
    im_x, im_y = torch.randn(6, 16), torch.randn(6, 16)
    optim.zero_grad()
    x, y = nn.functional.normalize(encoder(torch.cat([im_x, im_y])), dim=1).chunk(2)
    loss = align_loss(x, y) + (uniform_loss(x) + uniform_loss(y)) / 2
    loss_meter.update(loss, x.shape[0])
    loss.backward()
    optim.step()
    counts.append(nodes(loss_meter.sum))
print("autograd nodes reachable from loss_meter.sum after each step:", counts)
assert loss_meter.sum.requires_grad and loss_meter.sum.grad_fn is not None
assert all(b > a for a, b in zip(counts, counts[1:])), counts  # grows every step within the epoch
loss_meter.reset()
gc.collect()
assert loss_meter.sum == 0
# the saved activations themselves were freed by backward: a second backward through the kept graph raises
try:
    loss.backward()
    raise AssertionError("expected the freed graph to raise")
except RuntimeError as e:
    assert "second time" in str(e)
    print("the last step's saved tensors were freed by its backward (second backward raises)")
print("real: the meter keeps every step's graph nodes until reset() at the epoch end (memory grows per step)")
