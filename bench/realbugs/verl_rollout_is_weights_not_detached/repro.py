"""Reproduction for `verl_rollout_is_weights_not_detached`: volcengine/verl e01fc05b (add stopgrad/detach to IS weights).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch

torch.manual_seed(0)
logits = torch.randn(6, requires_grad=True)
rollout_log_prob = torch.randn(6) - 1.0
advantages = torch.randn(6)


def policy_grad(fixed):
    log_prob = torch.nn.functional.logsigmoid(logits)
    log_ratio = log_prob - rollout_log_prob                     # old_log_prob=log_prob (current policy)
    w = torch.exp(torch.clamp(log_ratio, min=-20, max=20)).clamp(max=2.0)
    if fixed:
        w = w.detach()
    pg_losses = -advantages * log_prob * w
    return torch.autograd.grad(pg_losses.mean(), logits)[0]


log_prob = torch.nn.functional.logsigmoid(logits)
w = torch.exp(log_prob - rollout_log_prob).clamp(max=2.0).detach()
expected = torch.autograd.grad((-advantages * w * log_prob).mean(), logits)[0]    # E[w * grad log pi * A]
assert torch.allclose(policy_grad(True), expected)
assert not torch.allclose(policy_grad(False), expected)
print("CONFIRMED")
