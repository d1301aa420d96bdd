"""Reproduction for `tm_lpips_state_keeps_graph`: Lightning-AI/torchmetrics commit 10e2cca60d ("Fix RuntimeError: CUDA out of memory. when using lpips").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `self.sum_scores += loss.sum()` adds a tensor that carries the graph of the LPIPS network applied to inputs that require grad, so the metric state keeps every update's graph alive (CUDA out of memory).
"""

import torch

net = torch.nn.Linear(4, 1)
sum_scores = torch.tensor(0.0)
img1 = torch.randn(2, 4, requires_grad=True)      # images that require grad (LPIPS used as a loss)
for _ in range(3):
    loss = net(img1)                               # `loss, total = _lpips_update(img1, img2, net=...)`
    sum_scores += loss.sum()                       # buggy: the metric state keeps the graph
assert sum_scores.grad_fn is not None              # the state carries every update's graph

sum_scores = torch.tensor(0.0)
for _ in range(3):
    sum_scores += net(img1).sum().detach()         # the fix
assert sum_scores.grad_fn is None

print("CONFIRMED")
