"""Reproduction for `skorch_evaluation_step_keeps_graph`: skorch-dev/skorch commit 9c8c193b ("Only require grad in evaluation_step when training.").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `evaluation_step` runs the module with grad enabled even when not training, and `forward()` collects every
batch's output with `list(self.forward_iter(...))`, so each collected prediction keeps its batch's autograd graph
(and saved activations) alive; the fix wraps the step in `torch.set_grad_enabled(training)`.
"""

import torch

module = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


def evaluation_step(Xi, fixed, training=False):
    if fixed:
        with torch.set_grad_enabled(training):
            module.train(training)
            return module(Xi)
    module.train(training)
    return module(Xi)


def forward(X, fixed):
    return list(evaluation_step(Xi, fixed) for Xi in X.split(4))      # y_infer = list(self.forward_iter(X))


X = torch.randn(12, 3)
buggy = forward(X, fixed=False)
assert all(y.requires_grad and y.grad_fn is not None for y in buggy)   # every batch's graph is kept
assert buggy[0].grad_fn.next_functions                                  # with its saved tensors
fixed = forward(X, fixed=True)
assert all(not y.requires_grad and y.grad_fn is None for y in fixed)
assert torch.allclose(torch.cat(buggy).detach(), torch.cat(fixed))

print("CONFIRMED")
