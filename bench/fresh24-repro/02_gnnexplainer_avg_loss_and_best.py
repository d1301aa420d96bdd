"""fresh24 real: RexYing/gnn-model-explainer train.py:200 (GS404).

`train()`: per epoch `avg_loss = 0.0`; per batch `loss = model.loss(ypred, label); loss.backward();
optimizer.step(); avg_loss += loss`. After the batch loop `avg_loss /= batch_idx + 1`, it is printed and given to
`writer.add_scalar`, and when the validation accuracy does not drop, `best_val_result["loss"] = avg_loss` keeps that
epoch's whole chain past the epoch (until the next such epoch). Run below with the same statements: the nodes
reachable from avg_loss grow with every batch, and best_val_result["loss"] still holds them after the next epoch
starts.
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=0.001)


def n_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


best_val_result = {"epoch": 0, "loss": 0, "acc": 0}
for epoch in range(2):
    avg_loss = 0.0
    counts = []
    for batch_idx in range(5):
        model.zero_grad()
        ypred = model(torch.randn(4, 10))
        loss = F.cross_entropy(ypred, torch.randint(0, 3, (4,)))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()
        avg_loss += loss                                # train.py:200
        counts.append(n_nodes(avg_loss))
    avg_loss /= batch_idx + 1
    print("epoch", epoch, "nodes reachable from avg_loss per batch:", counts, "| printed:", avg_loss)
    assert all(b > a for a, b in zip(counts, counts[1:]))
    if epoch == 0:
        best_val_result["loss"] = avg_loss              # train.py:218 (val acc not lower)
kept = n_nodes(best_val_result["loss"])
assert best_val_result["loss"].requires_grad and kept > 5
print("best_val_result['loss'] still holds epoch 0's chain after epoch 1:", kept, "nodes")
