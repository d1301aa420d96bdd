"""Reproduction for `agilerl_double_dqn_target_not_detached`: AgileRL/AgileRL 8d288867 (Detach q target).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch

torch.manual_seed(0)
actor = torch.nn.Linear(4, 3)
actor_target = torch.nn.Linear(4, 3)
states, next_states = torch.randn(5, 4), torch.randn(5, 4)
actions = torch.randint(0, 3, (5, 1))
rewards, dones = torch.randn(5, 1), torch.zeros(5, 1)
gamma = 0.99


def grad(fixed):
    actor.zero_grad()
    q_idx = actor_target(next_states).argmax(dim=1).unsqueeze(1)
    q_target = actor(next_states).gather(dim=1, index=q_idx)
    if fixed:
        q_target = q_target.detach()
    y_j = rewards + gamma * q_target * (1 - dones)
    q_eval = actor(states).gather(1, actions.long())
    torch.nn.functional.mse_loss(q_eval, y_j).backward()
    return actor.weight.grad.clone()


y = rewards + gamma * actor(next_states).gather(1, actor_target(next_states).argmax(1, keepdim=True)).detach()
semi = torch.autograd.grad(torch.nn.functional.mse_loss(actor(states).gather(1, actions), y), actor.weight)[0]
assert not torch.allclose(grad(False), semi)     # the target term is differentiated too
assert torch.allclose(grad(True), semi)
print("CONFIRMED")
