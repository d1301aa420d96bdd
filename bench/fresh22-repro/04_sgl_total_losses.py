"""fresh22 real: wujcan/SGL-Torch model/general_recommender/SGL.py:288, 289 (GS404).

train_model: per epoch `total_loss, total_bpr_loss, total_reg_loss = 0.0, 0.0, 0.0`; per batch
`total_loss += loss; total_bpr_loss += bpr_loss; total_reg_loss += self.reg * reg_loss`, then backward and step;
the totals are only formatted with %.4f in the epoch log. Each batch's graph stays reachable until the epoch
ends (one epoch is len(train)/batch_size batches). Run below with LightGCN-like embedding lookups.
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
users, items = nn.Embedding(50, 16), nn.Embedding(80, 16)
opt = torch.optim.Adam(list(users.parameters()) + list(items.parameters()), lr=1e-3)


def n_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


total_loss, total_bpr_loss, c1, c2 = 0.0, 0.0, [], []
for _ in range(5):
    u, p, n = torch.randint(0, 50, (32,)), torch.randint(0, 80, (32,)), torch.randint(0, 80, (32,))
    sup_logits = (users(u) * items(p)).sum(1) - (users(u) * items(n)).sum(1)
    bpr_loss = -torch.sum(F.logsigmoid(sup_logits))
    reg_loss = users(u).pow(2).sum() + items(p).pow(2).sum()
    loss = bpr_loss + 1e-4 * reg_loss
    total_loss += loss                                # SGL.py:288
    total_bpr_loss += bpr_loss                        # SGL.py:289
    opt.zero_grad()
    loss.backward()
    opt.step()
    c1.append(n_nodes(total_loss)); c2.append(n_nodes(total_bpr_loss))
print("nodes reachable from total_loss:", c1, "total_bpr_loss:", c2)
assert c1[-1] > 3 * c1[0] and c2[-1] > 3 * c2[0]
print("epoch log: %.4f" % (total_loss / 1000))      # the only reader
