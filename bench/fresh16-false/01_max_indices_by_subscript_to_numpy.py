"""fresh16 (false): GS201 Deep-RL-Hands-On `Chapter25/battle_play.py:70, 81`, `forest_both_play.py:77, 88`,
`forest_tigers_play.py:66`.

`actions = torch.max(qvals, dim=1)[1].cpu().numpy()` where `qvals = net((view_t, feats_t))` requires grad: element
1 of `torch.max(x, dim)` is the indices tensor (int64), which never requires grad, so `.numpy()` works. The same
for `x.max(1)[1]`, `torch.min(x, 1)[1]`, `x.sort(dim=1)[1]`, `torch.topk(x, k)[1]`, `x.argmax(1)` (the
`vals, idx = torch.max(...)` unpacking was already understood).
"""
import torch
import torch.nn as nn

net = nn.Linear(4, 3)
qvals = net(torch.randn(5, 4))
assert qvals.requires_grad
actions = torch.max(qvals, dim=1)[1].cpu().numpy()
actions = actions.astype("int32")
print(actions, torch.max(qvals, dim=1)[1].requires_grad, qvals.max(1)[1].requires_grad,
      torch.min(qvals, 1)[1].requires_grad, qvals.sort(dim=1)[1].requires_grad, torch.topk(qvals, 2)[1].requires_grad)
print(torch.max(qvals, dim=1)[0].requires_grad)  # the values do carry the graph
