"""fresh34 false: GS416 mr-eggplant/SAR sar.py:83.

"`loss` and `loss_second` both backward through `outputs`'s graph, so the second backward raises".
`forward_and_adapt_sar` (verbatim below, the SAM optimizer reduced to its two steps) backwards `loss` (from
`outputs = model(x)`) and then `loss_second`, which comes from a second forward `model(x)`. The only link between
the two is `filter_ids_1 = torch.where(entropys < margin)`: the one-argument torch.where of a comparison returns
a tuple of int64 index tensors with no history, so `entropys2[filter_ids_1]` indexes the second graph with
constants. The program runs the function for several test batches under `torch.no_grad()` (the decorator
re-enables grad, as in SAR's evaluation loop): both backwards run.
"""
import math

import numpy as np
import torch
import torch.nn as nn


def update_ema(ema, new_data):
    if ema is None:
        return new_data
    else:
        with torch.no_grad():
            return 0.9 * ema + (1 - 0.9) * new_data


@torch.jit.script
def softmax_entropy(x: torch.Tensor) -> torch.Tensor:
    """Entropy of softmax distribution from logits."""
    return -(x.softmax(1) * x.log_softmax(1)).sum(1)


class SAM(torch.optim.Optimizer):  # the two steps of sam.py, reduced
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        super().__init__(params, dict(rho=rho, **kwargs))
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                self.state[p]["old_p"] = p.data.clone()
                p.add_(p.grad * group["rho"] / (p.grad.norm() + 1e-12))
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.data = self.state[p]["old_p"]
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()


@torch.enable_grad()  # ensure grads in possible no grad context for testing
def forward_and_adapt_sar(x, model, optimizer, margin, reset_constant, ema):
    optimizer.zero_grad()
    outputs = model(x)
    entropys = softmax_entropy(outputs)
    filter_ids_1 = torch.where(entropys < margin)
    entropys = entropys[filter_ids_1]
    loss = entropys.mean(0)
    loss.backward()

    optimizer.first_step(zero_grad=True)
    entropys2 = softmax_entropy(model(x))
    entropys2 = entropys2[filter_ids_1]
    loss_second_value = entropys2.clone().detach().mean(0)
    filter_ids_2 = torch.where(entropys2 < margin)
    loss_second = entropys2[filter_ids_2].mean(0)
    if not np.isnan(loss_second.item()):
        ema = update_ema(ema, loss_second.item())

    loss_second.backward()
    optimizer.second_step(zero_grad=True)

    reset_flag = False
    if ema is not None:
        if ema < 0.2:
            print("ema < 0.2, now reset the model")
            reset_flag = True

    return outputs, ema, reset_flag


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.LayerNorm(16), nn.ReLU(), nn.Linear(16, 1000))
optimizer = SAM(model[1].parameters(), torch.optim.SGD, lr=0.00025, momentum=0.9)
idx = torch.where(softmax_entropy(model(torch.randn(8, 10))) < 10.0)
assert all(t.dtype == torch.int64 and not t.requires_grad and t.grad_fn is None for t in idx)
ema = None
before = model[1].weight.detach().clone()
with torch.no_grad():
    for _ in range(4):
        outputs, ema, reset_flag = forward_and_adapt_sar(torch.randn(8, 10), model, optimizer,
                                                         100.0, 0.2, ema)
assert not torch.equal(before, model[1].weight)
print("false: both backwards ran on every batch; the where() indices carry no graph")
