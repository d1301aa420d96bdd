"""Reproduction for `torchssl_amp_clip_before_unscale`: TorchSSL/TorchSSL eaed6653 (fix bug in gradient clipping).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn as nn

torch.manual_seed(0)


def step_update(fixed, clip=1.0):
    model = nn.Linear(10, 2)
    w0 = model.weight.detach().clone()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    x, y = torch.randn(8, 10), torch.randint(0, 2, (8,))
    total_loss = nn.functional.cross_entropy(model(x), y) * 0.05
    scaler.scale(total_loss).backward()
    if clip > 0:
        if fixed:
            scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    scaler.step(optimizer)
    scaler.update()
    return (model.weight.detach() - w0).norm().item(), model


torch.manual_seed(0)
buggy, *_ = step_update(False)
torch.manual_seed(0)
fixed, *_ = step_update(True)
torch.manual_seed(0)
m = nn.Linear(10, 2)
x, y = torch.randn(8, 10), torch.randint(0, 2, (8,))
(nn.functional.cross_entropy(m(x), y) * 0.05).backward()
gall = torch.cat([p.grad.flatten() for p in m.parameters()]).norm().item()
g = m.weight.grad.norm().item()
assert gall < 1.0 and abs(fixed - g) < 1e-4 * max(g, 1)       # fixed: the true step, unclipped (lr 1)
# the true gradient norm is well below the clip bound, so the fixed step is the plain SGD step;
# the buggy step clipped the 65536-times scaled gradient to norm 1, i.e. shrank it about 65536 / ||g|| times
assert fixed > 1000 * buggy, (fixed, buggy)
print("CONFIRMED")
