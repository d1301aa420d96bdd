"""Reproduction for `rlkit_sac_policy_after_qf_step`: rail-berkeley/rlkit commit b7f97b2 ("Optimize actor before the critic (#109)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `policy_loss` is built through `qf1(obs, new_obs_actions)`, whose graph saves the Q-network
weights; the trainer first runs `qf1_optimizer.step()` (an in-place update of those weights) and only
then `policy_loss.backward()`, which raises "one of the variables needed for gradient computation has
been modified by an inplace operation" (torch >= 1.5). The fix steps the policy before the critics.
"""

import torch

torch.manual_seed(0)


def train_step(fixed):
    policy = torch.nn.Linear(3, 2)
    qf1 = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    policy_optimizer = torch.optim.Adam(policy.parameters())
    qf1_optimizer = torch.optim.Adam(qf1.parameters())
    obs, actions, q_target = torch.randn(4, 3), torch.randn(4, 2), torch.randn(4, 1)

    new_obs_actions = torch.tanh(policy(obs))
    policy_loss = -qf1(torch.cat([obs, new_obs_actions], 1)).mean()
    qf1_loss = ((qf1(torch.cat([obs, actions], 1)) - q_target) ** 2).mean()

    if fixed:                                   # the fix: actor first
        policy_optimizer.zero_grad()
        policy_loss.backward()
        policy_optimizer.step()
    qf1_optimizer.zero_grad()
    qf1_loss.backward()
    qf1_optimizer.step()                        # in-place update of weights saved by policy_loss's graph
    if not fixed:                               # buggy: actor after the critic step
        policy_optimizer.zero_grad()
        policy_loss.backward()
        policy_optimizer.step()


try:
    train_step(fixed=False)
    raise AssertionError("expected policy_loss.backward() to raise")
except RuntimeError as exc:
    assert "modified by an inplace operation" in str(exc), exc
train_step(fixed=True)

print("CONFIRMED")
