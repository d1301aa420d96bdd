"""fresh35 false: SNAS-Series/SNAS-Series SNAS/train_search.py:489 (GS402).

"This backward goes into a graph an earlier backward freed ... The earlier backward is at line 489": the same
`loss.backward()` one iteration earlier. `loss` is assigned in every iteration by `if self.args.loss: if
self.args.snas: ... elif self.args.dsnas: ... else: ...` / `else: if snas or dsnas: loss = error_loss.clone()`; the
flags are command-line options, the same in every iteration. The only way to reach the backward with last
iteration's `loss` is an iteration that takes an unassigning arm after one that assigned, which constant flags never
do; with neither --snas nor --dsnas the first iteration raises UnboundLocalError before any backward. The loop
below is the file's, with a toy model.
"""
import types

import torch


def train(args, n_steps=3):
    w = torch.nn.Parameter(torch.randn(3))
    opt = torch.optim.SGD([w], lr=0.1)
    for step in range(n_steps):
        x = torch.randn(4, 3)
        if args.snas:
            error_loss = (x @ w).pow(2).mean()
        if args.dsnas:
            error_loss = (x @ w).pow(2).mean()
        resource_loss = 0.1 * torch.zeros(1)
        if args.loss:
            if args.snas:
                loss = resource_loss.clone() + error_loss.clone()
            elif args.dsnas:
                loss = resource_loss.clone()
            else:
                loss = resource_loss.clone() + -1.0 * (torch.log(normal_one_hot_prob)).sum()  # noqa: F821
        else:
            if args.snas or args.dsnas:
                loss = error_loss.clone()
        if args.snas:
            opt.zero_grad()
            error_loss.backward(retain_graph=True)
            opt.zero_grad()
        if args.snas or not args.random_sample and not args.dsnas:
            loss.backward()
        opt.step()
    return step


for snas, dsnas, lossf, rs in [(1, 0, 0, 0), (1, 0, 1, 0), (1, 0, 0, 1), (0, 1, 0, 0), (0, 1, 1, 1)]:
    a = types.SimpleNamespace(snas=snas, dsnas=dsnas, loss=lossf, random_sample=rs)
    assert train(a) == 2
for lossf in (0, 1):
    try:
        train(types.SimpleNamespace(snas=0, dsnas=0, loss=lossf, random_sample=0))
    except NameError as e:          # UnboundLocalError is a NameError
        print("neither mode: first iteration raises", type(e).__name__)
print("OK: no configuration backwards a freed graph")
