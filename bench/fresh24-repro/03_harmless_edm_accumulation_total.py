"""fresh24 harmless: yuanzhi-zhu/mini_edm train_edm.py:284 (GS404).

The claim "`batch_loss` adds a tensor with its graph each step, so memory grows every iteration" is half true.
Per training step (`for step in range(config.num_steps)`) the code makes `batch_loss = torch.tensor(0.0,
device=device)` anew, then `for _ in range(config.accumulation_steps)`: `loss = edm.train_step(batch); loss /=
accumulation_steps; loss.backward(); batch_loss += loss` (gradient accumulation), then `optimizer.step()` and reads
`batch_loss.detach().item()`. batch_loss holds the accumulation_steps graphs of one step (their saved tensors
already freed by each backward) and is replaced at the next step: nothing grows across steps. Run below with the
same statements: the nodes reachable from batch_loss are the same at every step, and no earlier step's batch_loss
is alive after the next step starts.
"""
import gc
import weakref

import torch
from torch import nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(8, 16), nn.SiLU(), nn.Linear(16, 8))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
accumulation_steps = 4


def n_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


def train_step(batch):                              # EDM.train_step's shape: a denoising loss of the batch
    noise = torch.randn_like(batch)
    return ((net(batch + noise) - batch) ** 2).mean()


counts, refs, train_loss_values = [], [], 0
for step in range(6):
    optimizer.zero_grad()
    batch_loss = torch.tensor(0.0)                  # train_edm.py:272, made anew every step
    for _ in range(accumulation_steps):
        loss = train_step(torch.randn(4, 8))
        loss /= accumulation_steps
        loss.backward()
        batch_loss += loss                          # train_edm.py:284
    optimizer.step()
    train_loss_values += batch_loss.detach().item()
    counts.append(n_nodes(batch_loss))
    refs.append(weakref.ref(batch_loss))
gc.collect()
print("nodes reachable from batch_loss at each step:", counts)
assert len(set(counts)) == 1, counts               # bounded by accumulation_steps, no growth
alive = [i for i, r in enumerate(refs) if r() is not None]
print("steps whose batch_loss graph is still alive:", alive)
assert alive == [len(refs) - 1]                     # only the current step's
