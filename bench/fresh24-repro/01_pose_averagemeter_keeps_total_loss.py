"""fresh24 real: tensorboy/pytorch_Realtime_Multi-Person_Pose_Estimation train/train_VGG19.py:212,
train/train_SH.py:170, train/train_ShuffleNetV2.py:167 (GS404, the same statement in the three trainers).

`train()` makes `losses = AverageMeter()` once per call (one call per epoch) and per batch does
`losses.update(total_loss, img.size(0))` with the loss tensor itself, then `total_loss.backward(); optimizer.step()`.
`AverageMeter.update` runs `self.sum += val * n`: the meter's sum chains every batch's graph for the whole epoch,
and `train()` returns `losses.avg`, a tensor that still holds them all (kept in `train_loss` until the next epoch).
The log line `'{loss.val:.4f} ({loss.avg:.4f})'.format(loss=losses)` formats the tensors without error, so nothing
stops it. Run below with the real statements: the nodes reachable from `losses.sum` grow with every batch.
"""
from collections import OrderedDict

import torch
from torch import nn

torch.manual_seed(0)


class AverageMeter(object):                      # train_VGG19.py:280-295, verbatim
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


def n_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 12, 3, padding=1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
criterion = nn.MSELoss(reduction='mean')


def get_loss(saved_for_loss, heat_temp, vec_temp):   # the shape of get_loss: total_loss = 0; total_loss += ...
    saved_for_log = OrderedDict()
    total_loss = 0
    for j in range(2):
        loss1 = criterion(saved_for_loss[2 * j], vec_temp)
        loss2 = criterion(saved_for_loss[2 * j + 1], heat_temp)
        total_loss += loss1
        total_loss += loss2
        saved_for_log['l%d' % j] = loss1.item()
    return total_loss, saved_for_log


def train(n_batches):
    losses = AverageMeter()
    counts = []
    for i in range(n_batches):
        img = torch.randn(2, 3, 8, 8)
        out = model(img)
        saved_for_loss = [out[:, :6], out[:, 6:], out[:, :6] * 2, out[:, 6:] * 2]
        total_loss, saved_for_log = get_loss(saved_for_loss, torch.randn(2, 6, 8, 8), torch.randn(2, 6, 8, 8))
        losses.update(total_loss, img.size(0))      # train_VGG19.py:212
        optimizer.zero_grad()
        total_loss.backward()
        optimizer.step()
        s = 'Loss {loss.val:.4f} ({loss.avg:.4f})'.format(loss=losses)   # the log line runs
        counts.append(n_nodes(losses.sum))
    return losses.avg, counts


train_loss, counts = train(6)
print("nodes reachable from losses.sum after each batch:", counts)
assert all(b > a for a, b in zip(counts, counts[1:])), counts
assert train_loss.requires_grad and n_nodes(train_loss) > counts[-1]
print("train() returns losses.avg with", n_nodes(train_loss), "nodes: every batch's graph of the epoch")
