"""fresh31 real: 1Konny/VIB-pytorch solver.py:166, 167, 171, 172 (GS404, four findings, one loop).

`Solver.test` runs `self.set_mode('eval')` (line 75: `toynet_ema.model.eval()`) and then, for every test batch,
with grad mode on (no `torch.no_grad()`/`volatile` anywhere; the EMA model's parameters require grad):
`class_loss += F.cross_entropy(logit, y, size_average=False).div(math.log(2))` (166),
`info_loss += -0.5*(1+2*std.log()-mu.pow(2)-std.pow(2)).sum().div(math.log(2))` (167),
`izy_bound += math.log(10,2) - class_loss` (171), `izx_bound += info_loss` (172). Each running total is a tensor
whose graph holds every batch's forward (with the activations saved for backward) until `test` returns; nothing
backwards them (only `.data[0]` is read after the loop). `test` runs after every training epoch (line 145) and
alone with `--mode test`. Run below with the real ToyNet (K=8, CPU) and the real statements over 5 batches: the
number of saved-tensor slots reachable from each total grows with every batch; under no_grad none is kept.
(The repository targets torch 0.3.1, where the same statements keep the same graphs; on torch 2.x `.data[0]`
on a 0-dim tensor raises after the loop, so the loop itself still runs first.)
"""
import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.filterwarnings("ignore")


class ToyNet(nn.Module):
    def __init__(self, K=256):
        super(ToyNet, self).__init__()
        self.K = K
        self.encode = nn.Sequential(nn.Linear(784, 64), nn.ReLU(True), nn.Linear(64, 64), nn.ReLU(True),
                                    nn.Linear(64, 2 * self.K))
        self.decode = nn.Sequential(nn.Linear(self.K, 10))

    def forward(self, x, num_sample=1):
        if x.dim() > 2:
            x = x.view(x.size(0), -1)
        statistics = self.encode(x)
        mu = statistics[:, :self.K]
        std = F.softplus(statistics[:, self.K:] - 5, beta=1)
        eps = std.data.new(std.size()).normal_()
        logit = self.decode(mu + eps * std)
        return (mu, std), logit


def saved(t):
    seen, stack, n = set(), [t.grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        n += sum(1 for a in dir(fn) if a.startswith("_saved_"))
        stack.extend(f for f, _ in fn.next_functions)
    return n


def test(model, batches, beta=1e-3):
    class_loss = info_loss = total_loss = izy_bound = izx_bound = 0
    trace = []
    for x, y in batches:
        (mu, std), logit = model(x)
        class_loss += F.cross_entropy(logit, y, size_average=False).div(math.log(2))     # 166
        info_loss += -0.5 * (1 + 2 * std.log() - mu.pow(2) - std.pow(2)).sum().div(math.log(2))  # 167
        total_loss += class_loss + beta * info_loss
        izy_bound += math.log(10, 2) - class_loss                                          # 171
        izx_bound += info_loss                                                             # 172
        trace.append(tuple(saved(t) for t in (class_loss, info_loss, izy_bound, izx_bound)))
    return trace, (class_loss, info_loss, izy_bound, izx_bound)


torch.manual_seed(1)
ema = ToyNet(8)
ema.eval()                                                    # set_mode('eval'), line 75
batches = [(torch.rand(4, 1, 28, 28), torch.randint(0, 10, (4,))) for _ in range(5)]
trace, totals = test(ema, batches)
print("saved slots reachable from (class_loss, info_loss, izy_bound, izx_bound) per batch:")
for row in trace:
    print("  ", row)
for k in range(4):
    col = [row[k] for row in trace]
    assert all(b > a for a, b in zip(col, col[1:])), k
assert all(t.requires_grad for t in totals)
with torch.no_grad():
    _, totals = test(ema, batches)
assert not any(t.requires_grad for t in totals)
print("OK: each of the four totals keeps every test batch's graph until test() returns")
