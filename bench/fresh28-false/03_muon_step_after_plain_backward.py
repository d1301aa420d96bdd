"""GS521 false: KellerJordan/cifar10-airbench airbench94_muon.py:72 and research/airbench94_muon_simple.py:34.

The Muon optimizer's `step()` (no `@torch.no_grad()`) reads `g = p.grad`, keeps `state["momentum_buffer"]` with
`buf.mul_(momentum).add_(g)`, and changes the weight only through `p.data`. The training loops call a plain
`F.cross_entropy(...).backward()` (no `create_graph`), so `p.grad` does not require grad, no operand of an op in
`step()` does (`p` is only read through `.data`), and nothing is recorded: the buffer never gets a `grad_fn` however
many steps run. (`@torch.compile` on the Newton-Schulz helper is left out here; it does not change grad mode.)
"""
import torch
import torch.nn.functional as F
from torch import nn


def zeropower_via_newtonschulz5(G, steps=3, eps=1e-7):
    assert len(G.shape) == 2
    a, b, c = (3.4445, -4.7750, 2.0315)
    X = G.bfloat16()
    X /= (X.norm() + eps)  # ensure top singular value <= 1
    if G.size(0) > G.size(1):
        X = X.T
    for _ in range(steps):
        A = X @ X.T
        B = b * A + c * A @ A
        X = a * X + B @ X
    if G.size(0) > G.size(1):
        X = X.T
    return X


class Muon(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, nesterov=False):
        defaults = dict(lr=lr, momentum=momentum, nesterov=nesterov)
        super().__init__(params, defaults)

    def step(self):
        for group in self.param_groups:
            lr = group["lr"]
            momentum = group["momentum"]
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                state = self.state[p]

                if "momentum_buffer" not in state.keys():
                    state["momentum_buffer"] = torch.zeros_like(g)
                buf = state["momentum_buffer"]
                buf.mul_(momentum).add_(g)
                g = g.add(buf, alpha=momentum) if group["nesterov"] else buf

                p.data.mul_(len(p.data)**0.5 / p.data.norm())  # normalize the weight
                update = zeropower_via_newtonschulz5(g.reshape(len(g), -1)).view(g.shape)  # whiten the update
                p.data.add_(update, alpha=-lr)  # take a step


torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1, bias=False),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10, bias=False))
filter_params = [p for p in model.parameters() if len(p.shape) == 4 and p.requires_grad]
optimizer2 = Muon(filter_params, lr=0.24, momentum=0.6, nesterov=True)
before = [p.detach().clone() for p in filter_params]
for step in range(5):
    inputs, labels = torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))
    outputs = model(inputs)
    F.cross_entropy(outputs, labels, label_smoothing=0.2, reduction="sum").backward()
    assert torch.is_grad_enabled()  # step() below runs with grad mode on, as in the repository
    optimizer2.step()
    model.zero_grad(set_to_none=True)
    for p in filter_params:
        buf = optimizer2.state[p]["momentum_buffer"]
        assert not buf.requires_grad and buf.grad_fn is None
        assert p.grad_fn is None and p.is_leaf
assert all(not torch.equal(a, p) for a, p in zip(before, filter_params))  # the optimizer did train the filters
print("ok: 5 Muon steps with grad mode on, no state tensor has a grad_fn")
