"""fresh23 real: running loss sums that keep every batch's graph (GS404).

A. xiaxin1998/DHCN model.py:233: `train_test` starts `total_loss = 0.0` and per batch runs `loss.backward()`,
   `model.optimizer.step()`, `total_loss += loss`; the sum is printed with `%.3f` and returned to main.py, which
   prints it again: every batch's graph of the epoch stays reachable (and `torch.autograd.set_detect_anomaly(True)`
   at line 222 keeps each node's forward traceback too).
B. huangtinglin/Knowledge_Graph_based_Intent_Network main.py:111: per epoch `loss, s, cor_loss = 0, 0, 0`; per
   batch `batch_loss.backward(); optimizer.step(); loss += batch_loss; cor_loss += batch_cor`; read only by
   `.item()` in the epoch's log. Line 112 (`cor_loss += batch_cor`, `cor` is the graph-carrying intent-independence
   term the model returns) is the same bug and was not reported (a miss, not counted).
Run below: the number of graph nodes reachable from the sums grows with every batch.
"""
import warnings

import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
warnings.filterwarnings("ignore", message="Converting a tensor with requires_grad=True")
emb = nn.Embedding(100, 16)
opt = torch.optim.Adam(emb.parameters(), lr=1e-3)


def n_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


# A: DHCN train_test
total_loss, counts = 0.0, []
for _ in range(5):
    sess, tar = torch.randint(0, 100, (32, 5)), torch.randint(0, 100, (32,))
    scores = torch.mm(emb(sess).mean(1), emb.weight.t())
    con_loss = 0.01 * (emb(sess).mean(1) - emb(sess).max(1)[0]).pow(2).mean()
    loss = F.cross_entropy(scores + 1e-8, tar) + con_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    total_loss += loss                                   # model.py:233
    counts.append(n_nodes(total_loss))
print("A: nodes reachable from total_loss:", counts, "\tLoss:\t%.3f" % total_loss)
assert counts[-1] > 3 * counts[0]

# B: KGIN main loop
loss, cor_loss, c1, c2 = 0, 0, [], []
for _ in range(5):
    u, p, n = torch.randint(0, 100, (32,)), torch.randint(0, 100, (32,)), torch.randint(0, 100, (32,))
    mf_loss = -torch.mean(F.logsigmoid((emb(u) * emb(p)).sum(1) - (emb(u) * emb(n)).sum(1)))
    batch_cor = (emb.weight[:4] @ emb.weight[:4].t()).pow(2).sum()
    batch_loss = mf_loss + 1e-4 * batch_cor
    opt.zero_grad()
    batch_loss.backward()
    opt.step()
    loss += batch_loss                                   # main.py:111
    cor_loss += batch_cor                                # main.py:112 (not reported)
    c1.append(n_nodes(loss)); c2.append(n_nodes(cor_loss))
print("B: nodes reachable from loss:", c1, "cor_loss:", c2, "epoch log %.4f" % loss.item())
assert c1[-1] > 3 * c1[0] and c2[-1] > 3 * c2[0]
