"""fresh19 (false): GS401 yandex-research/rtdl-revisiting-models `bin/grownet.py:441`.

Corrective step (stage s > 0, after `net_ensemble.add(m)`):

    _, out = net_ensemble.forward_grad(x_num, x_cat)      # c0 + boost_rate * sum of the models' predictions
    out = torch.as_tensor(out, dtype=torch.float32).cuda().view(-1, 1)
    loss = loss_f2(out, y)
    opt.zero_grad(); loss.backward(); opt.step()          # line 441

`torch.as_tensor` of a tensor returns that tensor (or, for another dtype or device, a differentiable conversion): it
keeps the autograd history; it is not a constructor. `out` requires grad, and the backward reaches the ensemble's
parameters. Runs: asserts `as_tensor` keeps `grad_fn` and the backward fills the gradients.
"""
import torch
import torch.nn as nn

models = [nn.Linear(3, 1), nn.Linear(3, 1)]
boost_rate = nn.Parameter(torch.tensor(0.5))
x, y = torch.randn(4, 3), torch.randn(4, 1)
prediction = None
for m in models:
    pred = m(x)
    prediction = pred if prediction is None else prediction + pred
out = 0.1 + boost_rate * prediction
for dtype in (torch.float32, torch.float64):
    o = torch.as_tensor(out, dtype=dtype).view(-1, 1)
    assert o.requires_grad and o.grad_fn is not None
    loss = nn.functional.mse_loss(o, y.to(dtype))
    loss.backward(retain_graph=True)
assert models[0].weight.grad is not None and boost_rate.grad is not None
print("as_tensor kept the graph; backward reached the ensemble")
