"""fresh29 real: wgrathwohl/GWG_release pcd_ebm_ema_cat.py:212 (GS406).

The training loop does `x = preprocess(x[0].to(device).requires_grad_())` with `preprocess(data)` =
`x_int = (data * 256).long(); x_oh = one_hot(x_int, 256).float()`, then `logp_real = model(x).squeeze()` and, when
`--p_control > 0` (the gradient-penalty option, default 0.0), `torch.autograd.grad(logp_real.sum(), x,
create_graph=True)`. The `.long()` cast drops the history (and the one-hot is a new tensor), so the `x` handed to
`autograd.grad` requires no grad: the penalty path raises at its first batch. Run below with the real statements and
a small MLP energy over the one-hot input.
"""
import torch
import torch.nn as nn


def preprocess(data):                       # pcd_ebm_ema_cat.py:111-114
    x_int = (data * 256).long()
    x_oh = torch.nn.functional.one_hot(x_int, 256).float()
    return x_oh


torch.manual_seed(0)
net = nn.Sequential(nn.Flatten(), nn.Linear(4 * 256, 16), nn.ReLU(), nn.Linear(16, 1))
x = [torch.rand(3, 4)]                        # a loader batch of 3 "images" with 4 pixels in [0, 1)
x = preprocess(x[0].requires_grad_())         # line 208
print("x requires grad after preprocess:", x.requires_grad)
assert not x.requires_grad
logp_real = net(x).squeeze()                  # line 210
assert logp_real.requires_grad               # through the parameters only
p_control = 1.0                               # --p_control 1.0
try:
    if p_control > 0:
        grad_ld = torch.autograd.grad(logp_real.sum(), x, create_graph=True)[0]   # line 212
except RuntimeError as e:
    print("raises:", str(e)[:100])
    assert "does not require grad" in str(e)
else:
    raise AssertionError("autograd.grad did not raise")
