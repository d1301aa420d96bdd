"""Reproduction for `slm_ppo_ratio_detached`: kengz/SLM-Lab commit 1ba7d078 ("fix ppo tensor detach to only old net").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `ratios = torch.exp(log_probs - old_log_probs).detach()` with advantages from `no_grad` makes the PPO
clip loss a constant, so the policy gets no gradient from it; the fix detaches `old_log_probs` instead.
"""

import copy
import torch

torch.manual_seed(0)
net = torch.nn.Linear(3, 2)
old_net = copy.deepcopy(net)
states = torch.randn(5, 3)
actions = torch.randint(0, 2, (5,))
with torch.no_grad():
    advs = torch.randn(5)


def log_probs_of(n):
    return torch.distributions.Categorical(logits=n(states)).log_prob(actions)


def clip_loss(fixed):
    log_probs = log_probs_of(net)
    old_log_probs = log_probs_of(old_net)
    if fixed:
        ratios = torch.exp(log_probs - old_log_probs.detach())   # the fix
    else:
        ratios = torch.exp(log_probs - old_log_probs).detach()
    sur_1 = -ratios * advs
    sur_2 = -torch.clamp(ratios, 0.8, 1.2) * advs
    return torch.mean(torch.max(sur_1, sur_2))


assert not clip_loss(False).requires_grad                # buggy: the policy loss carries no gradient
loss = clip_loss(True)
net.zero_grad()
loss.backward()
assert net.weight.grad.abs().sum() > 0                   # fixed: the policy trains
print("CONFIRMED")
