"""Reproduction for `skrl_deterministic_clamp_inplace`: Toni-SM/skrl commit 277f383f ("Use not in-place clamp method to allow gradient computation").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `DeterministicModel.act` clips the policy output with `actions.clamp_(low, high)`; when the network's last
op saves its output for backward (Tanh, as in a DDPG actor), the in-place clamp bumps that saved tensor's version
and the policy loss's backward raises "modified by an inplace operation". The fix uses out-of-place `torch.clamp`.
"""

import torch

torch.manual_seed(0)
policy = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
critic = torch.nn.Linear(3 + 2, 1)
states = torch.randn(6, 3)


def act(fixed):
    actions = policy(states)                   # actions = self.compute(states)
    if fixed:
        actions = torch.clamp(actions, min=-0.5, max=0.5)
    else:
        actions.clamp_(-0.5, 0.5)              # buggy
    return actions


def policy_loss(fixed):
    actions = act(fixed)
    return -critic(torch.cat([states, actions], 1)).mean()


try:
    policy_loss(False).backward()
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
policy.zero_grad()
policy_loss(True).backward()
assert policy[0].weight.grad is not None

print("CONFIRMED")
