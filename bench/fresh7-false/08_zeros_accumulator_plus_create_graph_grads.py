# From wjmaddox/swa_gaussian experiments/hessian_eigs/hess_vec_prod.py:69 (fresh7, first try at d79ed50).
# Finding: GS401 "`prod` has no autograd history, so `backward` raises. `torch.zeros(1, ...)` was created
# without requires_grad=True (line 62)."
# Why wrong: `prod` starts as zeros but the loop adds `(g * v).sum()` for every `g` of
# `torch.autograd.grad(loss, params, create_graph=True)`, which have history; `params` is never empty (the
# model's weight matrices), so `prod` has history at the backward (this program computes H*v with it).
import torch
import torch.nn as nn


def eval_hess_vec_prod(vec, params, net, criterion, dataloader):
    net.eval()
    net.zero_grad()
    for batch_idx, (inputs, targets) in enumerate(dataloader):
        outputs = net(inputs)
        loss = criterion(outputs, targets)
        grad_f = torch.autograd.grad(loss, inputs=params, create_graph=True)
        prod = torch.zeros(1, dtype=grad_f[0].dtype, device=grad_f[0].device)
        for (g, v) in zip(grad_f, vec):
            prod = prod + (g * v).sum()
        prod.backward()


net = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 3))
params = [p for p in net.parameters() if len(p.size()) > 1]
vec = [torch.randn_like(p) for p in params]
eval_hess_vec_prod(vec, params, net, nn.CrossEntropyLoss(), [(torch.randn(8, 4), torch.randint(0, 3, (8,)))])
print("ok", float(params[0].grad.norm()))
