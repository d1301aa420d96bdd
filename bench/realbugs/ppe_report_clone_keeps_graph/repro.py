"""Reproduction for `ppe_report_clone_keeps_graph`: pfnet/pytorch-pfn-extras 39fd071 (Use detach instead of clone to avoid retention of computational graph).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import gc
import weakref

import torch


def _copy_variable(value, fixed):
    if isinstance(value, torch.Tensor):
        return value.detach() if fixed else value.clone()
    return value


class Summary:                      # reporting.Summary, as fed by LogReport
    def __init__(self):
        self._x = 0.0
        self._n = 0

    def add(self, value, weight=1):
        self._x += weight * value
        self._n += weight


def train(fixed, iters=4):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    summary = Summary()
    refs = []
    for _ in range(iters):
        h = model(torch.randn(8, 4)).tanh()          # tanh saves its output
        refs.append(weakref.ref(h))
        loss = h.pow(2).mean()
        observation = {'loss': _copy_variable(loss, fixed)}     # ppe.reporting.report({'loss': loss})
        summary.add(observation['loss'])
        del h, loss, observation
    gc.collect()
    return summary, sum(r() is not None for r in refs)


summary, alive = train(False)
assert summary._x.requires_grad and alive == 4, alive      # every iteration's graph is kept by the summary
summary, alive = train(True)
assert not summary._x.requires_grad and alive == 0, alive
print("CONFIRMED")
