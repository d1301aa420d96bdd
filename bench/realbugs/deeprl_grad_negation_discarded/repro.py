"""Reproduction for `deeprl_grad_negation_discarded`: ShangtongZhang/DeepRL commit a0e541b805 ("fix a bug").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the tabular actor builds its update in `self.pi.grad` with `self.pi.grad.mul_(...).add_(grad).mul(-1)`;
the final `.mul(-1)` is out of place and its result is discarded, so `.grad` keeps the positive ascent
direction and `opt.step()` (a minimiser) moves the policy the wrong way (the other branch sets
`self.pi._grad = -grad`); the fix uses `.mul_(-1)`.
"""

import torch

pi = torch.zeros(2, requires_grad=True)
opt = torch.optim.SGD([pi], lr=0.1)
rho_m1_adv, extra = 2.0, torch.tensor([0.5, 0.0])


def step(fixed):
    with torch.no_grad():
        pi.zero_()
    opt.zero_grad()
    torch.log_softmax(pi, 0)[0].backward()                  # grad of log pi(a=0)
    ascent = pi.grad.clone() * rho_m1_adv + extra           # the direction the update should climb
    if fixed:
        pi.grad.mul_(rho_m1_adv).add_(extra).mul_(-1)       # the fix
    else:
        pi.grad.mul_(rho_m1_adv).add_(extra).mul(-1)        # buggy: the negated copy is thrown away
    opt.step()
    return pi.detach().clone(), ascent


moved, ascent = step(fixed=False)
assert torch.dot(moved, ascent) < 0                         # buggy: the step descends the objective
moved, ascent = step(fixed=True)
assert torch.dot(moved, ascent) > 0

print("CONFIRMED")
