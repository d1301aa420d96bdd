"""fresh19 (false): GS404 chenjun2hao/Attention_ocr.pytorch `train.py:178`.

    loss_avg = utils.averager()
    ...
            loss += criterion(decoder_output, target_variable[di])
            loss_avg.add(loss)                                    # line 178

    class averager(object):
        def add(self, v):
            if isinstance(v, Variable):
                count = v.data.numel()
                v = v.data.sum()
            elif isinstance(v, torch.Tensor):
                ...
            self.n_count += count
            self.sum += v

`isinstance(t, Variable)` is true for every tensor (the `Variable` metaclass checks `isinstance(t, torch.Tensor)`),
so `add` sums `v.data.sum()`: detached, and `loss_avg.sum` keeps no graph. Runs: asserts the sum has no grad_fn.
"""
import torch
from torch.autograd import Variable


class averager(object):
    def __init__(self):
        self.n_count, self.sum = 0, 0

    def add(self, v):
        if isinstance(v, Variable):
            count = v.data.numel()
            v = v.data.sum()
        elif isinstance(v, torch.Tensor):
            count = v.numel()
            v = v.sum()
        self.n_count += count
        self.sum += v


w = torch.randn(3, requires_grad=True)
loss_avg = averager()
for i in range(4):
    loss = 0.0
    for di in range(3):
        loss += (w * di).pow(2).sum()
        loss_avg.add(loss)
assert loss.requires_grad and not loss_avg.sum.requires_grad and loss_avg.sum.grad_fn is None
print("averager sum keeps no graph:", loss_avg.sum)
