"""Reproduction for `slm_a2c_advs_not_detached`: kengz/SLM-Lab commit 414b528d ("detach adv at diff point").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `advs = v_targets - v_preds` keeps the critic's graph, so the policy loss `-(log_probs * advs).mean()`
also sends gradient into the value network; the fix uses `(v_targets - v_preds).detach()`.
"""

import torch

torch.manual_seed(0)
actor = torch.nn.Linear(3, 2)
critic = torch.nn.Linear(3, 1)
states = torch.randn(5, 3)
actions = torch.randint(0, 2, (5,))
with torch.no_grad():
    v_targets = torch.randn(5)


def critic_grad(fixed):
    actor.zero_grad(); critic.zero_grad()
    v_preds = critic(states).squeeze(1)
    advs = (v_targets - v_preds).detach() if fixed else v_targets - v_preds
    log_probs = torch.distributions.Categorical(logits=actor(states)).log_prob(actions)
    policy_loss = -(log_probs * advs).mean()
    policy_loss.backward()
    return critic.weight.grad


g = critic_grad(False)
assert g is not None and g.abs().sum() > 0              # buggy: the policy loss trains the critic
assert critic_grad(True) is None                        # fixed
print("CONFIRMED")
