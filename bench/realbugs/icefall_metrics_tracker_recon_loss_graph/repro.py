"""Reproduction for `icefall_metrics_tracker_recon_loss_graph`: k2-fsa/icefall commit 804621100 ("Fix memory leak").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: compute_loss stored `info["recon_loss"] = reconstruction_loss`, a tensor with the batch's graph, in the
MetricsTracker that train_one_epoch folds into the running `tot_loss = tot_loss * (1 - 1/reset_interval) + loss_info`,
so every step's graph stays chained to the running total (memory leak); the fix stores `.detach().cpu().item()`.
"""

import collections

import torch


class MetricsTracker(collections.defaultdict):
    def __init__(self):
        super().__init__(int)

    def __add__(self, other):
        ans = MetricsTracker()
        for k, v in self.items():
            ans[k] = v
        for k, v in other.items():
            if v - v == 0:
                ans[k] = ans[k] + v
        return ans

    def __mul__(self, alpha):
        ans = MetricsTracker()
        for k, v in self.items():
            ans[k] = v * alpha
        return ans


def graphs_kept(t):
    seen, stack, n = set(), [t.grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        n += type(fn).__name__.startswith("MseLoss")
        stack.extend(f for f, _ in fn.next_functions)
    return n


torch.manual_seed(0)
model = torch.nn.Linear(4, 4)


def train(fixed, steps=5):
    tot_loss = MetricsTracker()
    for _ in range(steps):
        x = torch.randn(3, 4)
        reconstruction_loss = torch.nn.functional.mse_loss(model(x), x)
        loss = reconstruction_loss * 0.1
        info = MetricsTracker()
        info["loss"] = loss.detach().cpu().item()
        info["recon_loss"] = reconstruction_loss.detach().cpu().item() if fixed else reconstruction_loss
        loss.backward()
        tot_loss = (tot_loss * (1 - 1 / 200)) + info
    return tot_loss


buggy = train(False)
assert torch.is_tensor(buggy["recon_loss"]) and graphs_kept(buggy["recon_loss"]) == 5   # all steps' graphs alive
fixed = train(True)
assert isinstance(fixed["recon_loss"], float)
print("CONFIRMED")
