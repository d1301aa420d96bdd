"""Reproduction for `lerobot_sac_normalize_no_grad_cuts_actor`: huggingface/lerobot 0d88a5ee (remove the torch.no_grad decorator in normalize.py).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


class Normalize(torch.nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.fixed = fixed
        self.register_buffer("mean", torch.zeros(2))
        self.register_buffer("std", torch.ones(2))

    def _forward(self, batch):
        batch = dict(batch)
        batch["action"] = (batch["action"] - self.mean) / (self.std + 1e-8)
        return batch

    def forward(self, batch):
        if self.fixed:
            return self._forward(batch)
        with torch.no_grad():            # buggy: the @torch.no_grad decorator on forward
            return self._forward(batch)


def actor_grad(fixed):
    torch.manual_seed(0)
    actor = torch.nn.Linear(3, 2)
    critic = torch.nn.Linear(3 + 2, 1)
    normalize_targets = Normalize(fixed)
    obs = torch.randn(4, 3)
    actions_pi = torch.tanh(actor(obs))
    actions = normalize_targets({"action": actions_pi})["action"]     # critic_forward's output_normalization
    q = critic(torch.cat([obs, actions], -1))
    actor_loss = (-q).mean()
    if not actor_loss.requires_grad:
        return None
    actor_loss.backward()
    return actor.weight.grad


assert actor_grad(False) is None                  # the actor gets nothing from -Q
assert actor_grad(True).abs().sum() > 0
print("CONFIRMED")
