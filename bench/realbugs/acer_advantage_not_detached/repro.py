"""Reproduction for `acer_advantage_not_detached`: Kaixhin/ACER commit aa0a692 ("Detach advantage from critic").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `A = Qret - Vs[i]` keeps the critic's graph, so the policy-gradient loss `-(rho * log_prob * A)` also
sends gradient into the value head; the fix multiplies by `A.detach()`.
"""

import torch

torch.manual_seed(0)
actor = torch.nn.Linear(3, 2)
critic = torch.nn.Linear(3, 1)
s = torch.randn(1, 3)
action = torch.tensor([[1]])
Qret = torch.tensor([[1.5]])


def critic_grad(fixed):
    actor.zero_grad(); critic.zero_grad()
    policy = torch.softmax(actor(s), dim=1)
    V = critic(s)
    A = Qret - V
    log_prob = policy.gather(1, action).log()
    adv = A.detach() if fixed else A                    # the fix
    single_step_policy_loss = -(log_prob * adv).mean(0)
    single_step_policy_loss.sum().backward()
    return critic.weight.grad


g = critic_grad(False)
assert g is not None and g.abs().sum() > 0              # buggy: the policy loss trains the critic
assert critic_grad(True) is None                        # fixed: only the actor gets gradient
print("CONFIRMED")
