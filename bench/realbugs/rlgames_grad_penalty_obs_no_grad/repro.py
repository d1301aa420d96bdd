"""Reproduction for `rlgames_grad_penalty_obs_no_grad`: Denys88/rl_games 633bd4c (make obs batch require grads as requirement for loss).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


def grad_penalty_loss(obs_batch, actions_log_probs):     # rl_games/common/common_losses.py
    gradient = torch.autograd.grad(actions_log_probs.sum(), obs_batch, create_graph=True)[0]
    return torch.sum(torch.square(gradient), dim=-1)


def calc(fixed):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    obs_batch = torch.randn(8, 4)                         # from the experience buffer
    if fixed:
        obs_batch = obs_batch.requires_grad_(True)
    mu = model(obs_batch)
    action_log_probs = torch.distributions.Normal(mu, 1.0).log_prob(torch.zeros(8, 2)).sum(-1)
    return grad_penalty_loss(obs_batch, action_log_probs)


try:
    calc(False)
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "does not require grad" in str(e), e
calc(True).mean().backward()
print("CONFIRMED")
