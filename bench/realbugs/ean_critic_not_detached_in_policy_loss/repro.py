"""Reproduction for `ean_critic_not_detached_in_policy_loss`: astariul/encode-attend-navigate-pytorch 5870c16 (Fix gradients bug).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn.functional as F

torch.manual_seed(0)
actor = torch.nn.Linear(4, 3)
critic = torch.nn.Linear(4, 1)
data = torch.randn(6, 4)
actions = torch.randint(0, 3, (6,))
reward = torch.randn(6)


def critic_grad(fixed):
    actor.zero_grad(); critic.zero_grad()
    critique = critic(data).squeeze(1)
    log_probs = torch.log_softmax(actor(data), -1).gather(1, actions[:, None]).squeeze(1)
    if fixed:
        loss1 = ((reward - critique).detach() * log_probs).mean()
    else:
        loss1 = ((reward - critique) * log_probs).mean()        # buggy
    loss2 = F.mse_loss(reward, critique)
    (loss1 + loss2).backward()
    return critic.weight.grad.clone()


mse_only = torch.autograd.grad(F.mse_loss(reward, critic(data).squeeze(1)), critic.weight)[0]
assert not torch.allclose(critic_grad(False), mse_only)      # the critic also learns from the policy loss
assert torch.allclose(critic_grad(True), mse_only)
print("CONFIRMED")
