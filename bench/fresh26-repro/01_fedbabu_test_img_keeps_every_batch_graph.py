"""fresh26 real: jhoon-oh/FedBABU models/test.py:41 (GS404).

`test_img` (called by `test_img_avg_all` from main_lg.py / main_local.py, and by `test_img_ensemble_all`; no caller
uses `torch.no_grad()` and the file has none) puts the net in eval mode and, for every test batch,
`log_probs = net_g(data)` then `probs.append(log_probs)`. `probs` is never read (the function returns
`accuracy, test_loss`), but every appended output keeps its graph, with the activations each layer saved, until
the function returns: one graph per test batch for the whole test set. Run below with the real statements: the
number of saved tensors reachable from `probs` grows by the same amount every batch.
"""
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def reachable_saved(tensors):
    seen, stack, saved = set(), [t.grad_fn for t in tensors if t.grad_fn is not None], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        saved += sum(1 for a in dir(fn) if a.startswith("_saved_") and isinstance(getattr(fn, a), torch.Tensor))
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen), saved


torch.manual_seed(0)
net_g = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))
datatest = TensorDataset(torch.randn(40, 16), torch.randint(0, 10, (40,)))

net_g.eval()                                             # test.py:27
test_loss, correct = 0, 0
data_loader = DataLoader(datatest, batch_size=8)
probs = []
growth = []
for idx, (data, target) in enumerate(data_loader):
    log_probs = net_g(data)
    probs.append(log_probs)                              # test.py:41
    test_loss += F.cross_entropy(log_probs, target, reduction='sum').item()
    y_pred = log_probs.data.max(1, keepdim=True)[1]
    correct += y_pred.eq(target.data.view_as(y_pred)).long().cpu().sum()
    growth.append(reachable_saved(probs))
print("(graph nodes, saved tensors) reachable from probs after each batch:", growth)
assert all(p.requires_grad for p in probs)
assert [g[1] for g in growth] == [growth[0][1] * (i + 1) for i in range(len(growth))]
assert growth[-1][1] > growth[0][1]
print("every batch's graph (and saved activations) is kept until test_img returns")
