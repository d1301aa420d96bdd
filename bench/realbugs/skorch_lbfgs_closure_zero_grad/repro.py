"""Reproduction for `skorch_lbfgs_closure_zero_grad`: skorch-dev/skorch commit abc0ec53 ("Call zero grad on each train step").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `train_step` passes a closure to `optimizer.step` and calls `zero_grad()` only after the step; LBFGS calls the
closure several times per step, so each call's backward adds onto the previous call's gradients and LBFGS sees wrong
gradients; the fix zeroes the gradients at the start of the closure.
"""

import torch

target = torch.tensor([1.0, -2.0])


def fit(fixed):
    w = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.LBFGS([w], lr=1.0, max_iter=5)
    errors = []

    def step_fn():
        if fixed:
            opt.zero_grad()                       # the fix
        loss = ((w - target) ** 2).sum()
        loss.backward()
        errors.append((w.grad - 2 * (w.detach() - target)).abs().max().item())  # vs the true gradient
        return loss

    opt.step(step_fn)
    opt.zero_grad()                               # buggy form zeroes only after the whole step
    return errors


buggy = fit(False)
assert len(buggy) > 1 and max(buggy) > 1e-3       # buggy: later closure calls see accumulated gradients
assert max(fit(True)) < 1e-6

print("CONFIRMED")
