"""Reproduction for `d3rlpy_iql_target_not_detached`: takuseno/d3rlpy commit 6b55a1b8 ("Detach target value").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: IQL's `compute_target` returns `self._value_func(next_obs)` with its graph; the value function is in
the critic optimizer, so the TD loss of the Q function also trains V through the target. The fix wraps it in `torch.no_grad()`.
"""

import torch

torch.manual_seed(0)
q_func = torch.nn.Linear(3, 1)
value_func = torch.nn.Linear(3, 1)
obs, next_obs, rew = torch.randn(4, 3), torch.randn(4, 3), torch.randn(4, 1)


def compute_target(fixed):
    if fixed:
        with torch.no_grad():                           # the fix
            return value_func(next_obs)
    return value_func(next_obs)


def v_grad_from_q_loss(fixed):
    q_func.zero_grad(); value_func.zero_grad()
    q_tpn = compute_target(fixed)
    y = rew + 0.99 * q_tpn
    q_loss = ((q_func(obs) - y) ** 2).mean()
    q_loss.backward()
    return value_func.weight.grad


g = v_grad_from_q_loss(False)
assert g is not None and g.abs().sum() > 0              # buggy: the TD loss trains V through its target
g = v_grad_from_q_loss(True)
assert g is None                                        # fixed: V gets no gradient from the Q loss
print("CONFIRMED")
