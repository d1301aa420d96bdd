"""fresh29 real: singh-hrituraj/PixelCNN-Pytorch train.py:98 (GS404).

`main` makes `loss_overall = []` once, before the epoch loop; per batch it runs `loss = criterion(output, target)`,
`loss.backward()`, `optimizer.step()`, `loss_ += loss` (the tensor, with its graph), and every 100 steps
`loss_overall.append(loss_/1000.0)` then `loss_ = 0`. Nothing reads or clears the list: each appended sum holds the
graphs of its 100 losses (the whole network's backward graph of each step, its buffers freed by the backward), and
the list keeps them for the whole run. Run below (a 2-layer conv net for PixelCNN, append every 2 steps): the
number of autograd nodes reachable from the list grows by the same amount at every append and never drops.
"""
import torch
from torch import nn, optim


def reachable(roots):
    seen, stack = set(), [t.grad_fn for t in roots if t.grad_fn is not None]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 256, 1))
optimizer = optim.Adam(net.parameters())
criterion = nn.CrossEntropyLoss()
loss_overall = []
counts = []
for i in range(3):                                    # epochs
    step = 0
    loss_ = 0
    for _ in range(4):                                # batches
        images = torch.rand(2, 1, 6, 6)
        target = (images[:, 0, :, :] * 255).long()
        optimizer.zero_grad()
        output = net(images)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        loss_ += loss
        step += 1
        if step % 2 == 0:                             # the file's `step % 100`
            loss_overall.append(loss_ / 1000.0)       # line 98
            loss_ = 0
            counts.append(reachable(loss_overall))
print("nodes reachable from loss_overall after each append:", counts)
assert all(b > a for a, b in zip(counts, counts[1:]))
assert all(t.requires_grad for t in loss_overall)
