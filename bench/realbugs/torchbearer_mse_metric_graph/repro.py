"""Reproduction for `torchbearer_mse_metric_graph`: pytorchbearer/torchbearer commit bd39387dea ("Fix memory leak with mse primitive").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The MSE metric returns `torch.pow(y_pred - y_true, 2)` with the prediction's graph, and the running metric keeps it across batches; the fix returns `.data`.
"""

import torch

model = torch.nn.Linear(3, 1)
y_pred = model(torch.randn(4, 3))
y_true = torch.randn(4)
value = torch.pow(y_pred - y_true.view_as(y_pred), 2)            # buggy metric value
assert value.grad_fn is not None                                  # a running mean of these keeps the graphs
value = torch.pow(y_pred - y_true.view_as(y_pred), 2).data       # the fix
assert value.grad_fn is None

print("CONFIRMED")
