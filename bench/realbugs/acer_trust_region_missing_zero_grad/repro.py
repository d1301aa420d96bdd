"""Reproduction for `acer_trust_region_missing_zero_grad`: Kaixhin/ACER commit 1cce3ca ("change kl direction and zero out grads before trust loss").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `_trust_region_loss` reads `g = [param.grad.data.clone() ...]` right after `loss.backward(retain_graph=True)`,
but the model's .grad still holds the gradient of the previous network update, so g is the sum of the stale and
the new gradient; the fix calls `model.zero_grad()` before the backward.
"""

import torch

torch.manual_seed(0)
model = torch.nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.0)

# a previous update leaves gradients on the model (backward + step, no zeroing afterwards)
opt.zero_grad()
model(torch.randn(4, 3)).pow(2).sum().backward()
opt.step()


def trust_region_g(fixed):
    saved = [p.grad.clone() for p in model.parameters()]
    x = torch.randn(1, 3)
    torch.manual_seed(1)
    loss = model(torch.ones(1, 3)).log_softmax(1)[0, 0]
    if fixed:
        model.zero_grad()                                  # the fix
    loss.backward(retain_graph=True)
    g = [p.grad.data.clone() for p in model.parameters()]
    for p, s in zip(model.parameters(), saved):            # restore the stale state for the next call
        p.grad = s
    return g


true_g = torch.autograd.grad(model(torch.ones(1, 3)).log_softmax(1)[0, 0], list(model.parameters()))
g_bug, g_fix = trust_region_g(False), trust_region_g(True)
assert not torch.allclose(g_bug[0], true_g[0])             # buggy: g includes the previous update's gradient
assert all(torch.allclose(a, b) for a, b in zip(g_fix, true_g))
print("CONFIRMED")
