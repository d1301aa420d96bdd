"""Reproduction for `horovod_example_metric_sum_keeps_graph`: horovod/horovod 6608ba0e (Fix memory leak in pytorch_imagenet_resnet50.py example).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import gc
import weakref

import torch


class Allreduce(torch.autograd.Function):       # hvd.allreduce on one process: differentiable, returns the average
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g


class Metric(object):
    def __init__(self, fixed):
        self.fixed = fixed
        self.sum = torch.tensor(0.)
        self.n = torch.tensor(0.)

    def update(self, val):
        if self.fixed:
            self.sum += Allreduce.apply(val.detach().cpu())
        else:
            self.sum += Allreduce.apply(val.cpu())      # buggy
        self.n += 1


def train(fixed, batches=4):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    train_loss = Metric(fixed)
    refs = []
    for _ in range(batches):
        out = model(torch.randn(8, 4)).sigmoid()       # sigmoid saves its output
        refs.append(weakref.ref(out))
        loss = torch.nn.functional.binary_cross_entropy(out, torch.rand(8, 2))
        train_loss.update(loss)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        del out, loss
    gc.collect()
    return train_loss, refs


def count_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        stack.extend(f for f, _ in n.next_functions)
    return len(seen)


m4, _ = train(False, 4)
m12, _ = train(False, 12)
assert m12.sum.requires_grad and count_nodes(m12.sum) > count_nodes(m4.sum) + 20   # the running sum chains every batch's graph
m, refs = train(True)
assert not m.sum.requires_grad
print("CONFIRMED")
