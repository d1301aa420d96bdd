"""fresh22 real: kavehhassani/mvgrl graph/train.py:278 (GS404).

`epoch_loss = 0.0` per epoch; per batch `loss = loss1 + loss2; epoch_loss += loss; loss.backward(); step`.
epoch_loss keeps every batch's graph for the epoch; worse, `best = epoch_loss` (line 287) keeps the best epoch's
whole chain alive until a better epoch replaces it. Run below: nodes reachable from epoch_loss and from best grow.
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)


def n_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


best, counts = 1e9, []
for epoch in range(2):
    epoch_loss = 0.0
    for _ in range(5):
        opt.zero_grad()
        x = torch.randn(8, 16)
        loss1 = model(x).pow(2).mean()
        loss2 = model(x).abs().mean()
        loss = loss1 + loss2
        epoch_loss += loss                            # train.py:278
        loss.backward()
        opt.step()
        counts.append(n_nodes(epoch_loss))
    epoch_loss /= 5
    if epoch_loss < best:
        best = epoch_loss                             # train.py:287: the chain outlives the epoch
print("nodes reachable from epoch_loss:", counts, "; kept by best:", n_nodes(best))
assert counts[4] > 3 * counts[0] and best.requires_grad and n_nodes(best) > counts[0]
