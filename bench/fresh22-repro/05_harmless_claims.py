"""fresh22 harmless claims: the statement does what gradsight says, the consequence never happens.

A. uoe-agents/seac seql/iql.py:223 (GS404): `q_losses = []` is made in `update`, `for a_i in range(self.n_agents)`
   appends `update_agent(...)`'s returned qloss (already backwarded: saved buffers freed, nodes kept) and returns
   the list; the only caller (seql/train.py:363) hands it to `logger.log_losses`, which stores `.item()` of each.
   True: the list holds n_agents graphs during one call. But it does not grow across training steps: it is a new
   list per call, bounded by the number of agents, and dies when the caller drops it (run below: no graph of an
   earlier update is alive after the next).
B. JiaxuanYou/graph-generation model.py:996 (GS301): in GCN_generator.forward without teacher forcing,
   `adj[:, i, 0:i] = prob...` writes into `adj`, which GraphConv's `torch.matmul(adj, x)` saved in the previous
   iteration (from i == 2): backward would raise. But line 990 (`adj_output[:, 0:i, i] = prob.clone()`, a
   (B, i, 1) value into a (B, i) slot) raises a broadcast error in forward at i == 2 first for every graph of 3 or
   more nodes (at i == 1 the written adj is the initial eye, saved only if the input x has history); with 990/997 squeezed, backward
   does raise (run below). But no file builds GCN_generator: its only use is commented-out test
   code (model.py:1023-1037) that calls it with teacher_force=True and never backwards.
"""
import gc
import weakref

import torch
from torch import nn

torch.manual_seed(0)

# A
n_agents = 3
models = [nn.Linear(6, 4) for _ in range(n_agents)]
opts = [torch.optim.Adam(m.parameters()) for m in models]


def update_agent(a_i):
    q = models[a_i](torch.randn(16, 6)).sum(1, keepdim=True)
    qloss = ((q - torch.randn(16, 1)) ** 2).mean()
    opts[a_i].zero_grad()
    qloss.backward()
    opts[a_i].step()
    return qloss


def update():
    q_losses = []
    for a_i in range(n_agents):
        q_losses.append(update_agent(a_i))          # iql.py:223
    return q_losses


current = []                                        # logger.current_alg_losses_list
refs = []
for step in range(4):
    losses = update()                               # train.py:363
    refs.append([weakref.ref(l) for l in losses])
    current.append([l.item() for l in losses])      # logger.log_losses
    del losses
    gc.collect()
alive = [sum(r() is not None for r in step) for step in refs]
print("A: losses (with their graphs) still alive per earlier update:", alive)
assert alive == [0, 0, 0, 0]


# B
class GraphConv(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d, d) * 0.1)

    def forward(self, x, adj):
        y = torch.matmul(adj, x)
        return torch.matmul(y, self.weight)


def preprocess(A):
    degrees = torch.sum(A, dim=2)
    D = torch.zeros(A.size(0), A.size(1), A.size(2))
    for i in range(D.size(0)):
        D[i, :, :] = torch.diag(torch.pow(degrees[i, :], -0.5))
    return torch.matmul(torch.matmul(D, A), D)


conv, act = GraphConv(4), nn.ReLU()


def gcn_generator_forward(x, fix_broadcast=False):   # model.py:959-1015, teacher_force=False
    n = x.size(1)
    adj = torch.eye(n).view(1, n, n).repeat(x.size(0), 1, 1)
    adj_output = torch.eye(n).view(1, n, n).repeat(x.size(0), 1, 1)
    x = act(conv(x, adj))
    for i in range(1, n):
        x_last, x_prev = x[:, i:i + 1, :].clone(), x[:, 0:i, :].clone()
        prob = x_prev @ x_last.permute(0, 2, 1)
        adj_output[:, i, 0:i] = prob.permute(0, 2, 1).clone()
        col = prob.squeeze(2) if fix_broadcast else prob
        adj_output[:, 0:i, i] = col.clone()           # line 990
        adj[:, i, 0:i] = prob.permute(0, 2, 1).clone()   # line 996
        adj[:, 0:i, i] = col.clone()                  # line 997
        adj = preprocess(adj)
        x = act(conv(x, adj))
    return adj_output


try:                                                 # as written: line 990 raises at i == 2 in forward
    gcn_generator_forward(torch.rand(1, 5, 4))
    raise SystemExit("B: expected the shape error")
except RuntimeError as e:
    assert "expanded size" in str(e)
    print("B: as written, forward raises at line 990 first:", str(e)[:60], "...")
try:                                                 # with 990/997 fixed, line 996's write breaks backward
    gcn_generator_forward(torch.rand(1, 5, 4), fix_broadcast=True).sum().backward()
    raise SystemExit("B: expected the in-place error")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e)
    print("B: with the broadcast fixed, backward raises:", str(e)[:70], "... (and nothing builds GCN_generator)")
