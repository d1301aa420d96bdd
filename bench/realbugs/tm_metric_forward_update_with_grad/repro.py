"""Reproduction for `tm_metric_forward_update_with_grad`: Lightning-AI/torchmetrics commit 6af1939b25 ("[Metrics] Detach bugfix (#4313)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `Metric.forward` calls `self.update(...)` in grad mode, so states accumulated from predictions that require grad keep every step's graph; the fix wraps it in `torch.no_grad()`.
"""

import torch

class Metric:
    def __init__(self):
        self.total = torch.tensor(0.0)
    def update(self, preds):
        self.total += preds.sum()

model = torch.nn.Linear(3, 1)
m = Metric()
m.update(model(torch.randn(2, 3)))                 # buggy: `self.update(*args, **kwargs)` in grad mode
assert m.total.grad_fn is not None                 # the state holds the step's graph

m = Metric()
with torch.no_grad():                              # the fix
    m.update(model(torch.randn(2, 3)))
assert m.total.grad_fn is None

print("CONFIRMED")
