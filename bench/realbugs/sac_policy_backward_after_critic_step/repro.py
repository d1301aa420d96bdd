"""Reproduction for `sac_policy_backward_after_critic_step`: pranz24/pytorch-soft-actor-critic commit e961172767 ("fix for pytorch-1.5").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `update_parameters` builds `qf1, qf2 = self.critic(state, action)` and the policy loss through
`self.critic(state, pi)` first, then runs `qf1_loss.backward(); critic_optim.step()` and only afterwards
`qf2_loss.backward()` and `policy_loss.backward()`; the critic step updates in place weights that those graphs
saved, so the later backward raises "modified by an inplace operation" (from PyTorch 1.5 on; before, it silently
used the updated weights); the fix steps the critic on `qf1_loss + qf2_loss` before building the policy loss.
"""

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class QNetwork(nn.Module):                          # twin Q heads in one module
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(5, 8), nn.Linear(8, 1)
        self.l3, self.l4 = nn.Linear(5, 8), nn.Linear(8, 1)

    def forward(self, s, a):
        xu = torch.cat([s, a], 1)
        return self.l2(F.relu(self.l1(xu))), self.l4(F.relu(self.l3(xu)))


critic, policy = QNetwork(), nn.Linear(3, 2)
critic_optim = torch.optim.Adam(critic.parameters(), lr=1e-3)
policy_optim = torch.optim.Adam(policy.parameters(), lr=1e-3)
state, action, target = torch.randn(6, 3), torch.randn(6, 2), torch.randn(6, 1)


def buggy():
    qf1, qf2 = critic(state, action)
    qf1_loss, qf2_loss = F.mse_loss(qf1, target), F.mse_loss(qf2, target)
    pi = torch.tanh(policy(state))
    qf1_pi, qf2_pi = critic(state, pi)
    policy_loss = (-torch.min(qf1_pi, qf2_pi)).mean()
    critic_optim.zero_grad()
    qf1_loss.backward()
    critic_optim.step()                             # updates the critic's weights in place
    critic_optim.zero_grad()
    qf2_loss.backward()
    critic_optim.step()
    policy_optim.zero_grad()
    policy_loss.backward()                          # graph built with the old critic weights
    policy_optim.step()


def fixed():
    qf1, qf2 = critic(state, action)
    qf_loss = F.mse_loss(qf1, target) + F.mse_loss(qf2, target)
    critic_optim.zero_grad()
    qf_loss.backward()
    critic_optim.step()
    pi = torch.tanh(policy(state))
    qf1_pi, qf2_pi = critic(state, pi)              # built after the critic step
    policy_loss = (-torch.min(qf1_pi, qf2_pi)).mean()
    policy_optim.zero_grad()
    policy_loss.backward()
    policy_optim.step()


try:
    buggy()
    raise AssertionError("expected the update to raise")
except RuntimeError as exc:
    assert "modified by an inplace operation" in str(exc)

fixed()
assert policy.weight.grad is not None

print("CONFIRMED")
