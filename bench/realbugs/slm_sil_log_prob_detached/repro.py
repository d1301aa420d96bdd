"""Reproduction for `slm_sil_log_prob_detached`: kengz/SLM-Lab commit 98aca084 ("don't detach sil log prob").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `log_probs = calc_log_probs(...).detach()` cuts the self-imitation policy loss
`mean(-log_probs * clipped_advs)` off the policy, so it only trains the critic; the fix removes the `.detach()`.
"""

import torch

torch.manual_seed(0)
actor = torch.nn.Linear(3, 2)
critic = torch.nn.Linear(3, 1)
states = torch.randn(5, 3)
actions = torch.randint(0, 2, (5,))
returns = torch.full((5,), 10.0)


def actor_grad(fixed):
    actor.zero_grad(); critic.zero_grad()
    v_preds = critic(states).squeeze(1)
    clipped_advs = torch.clamp(returns - v_preds, min=0.0)
    log_probs = torch.distributions.Categorical(logits=actor(states)).log_prob(actions)
    if not fixed:
        log_probs = log_probs.detach()
    sil_policy_loss = torch.mean(-log_probs * clipped_advs)
    sil_policy_loss.backward()
    return actor.weight.grad


assert actor_grad(False) is None                        # buggy: the SIL policy loss never reaches the actor
assert actor_grad(True).abs().sum() > 0                 # fixed
print("CONFIRMED")
