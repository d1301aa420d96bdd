"""Reproduction for `slm_sarsa_target_not_detached`: kengz/SLM-Lab commit fdb7f3ba ("no grad for next q preds").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `next_q_preds = self.net(next_states)` keeps the graph, so the SARSA target
`rewards + gamma * (1 - dones) * act_next_q_preds` is differentiated too and the TD loss also moves Q(s', a')
toward Q(s, a); the fix computes `next_q_preds` under `torch.no_grad()`.
"""

import torch

torch.manual_seed(0)
net = torch.nn.Linear(3, 2)
states, next_states = torch.randn(6, 3), torch.randn(6, 3)
actions, next_actions = torch.randint(0, 2, (6,)), torch.randint(0, 2, (6,))
rewards, dones = torch.randn(6), torch.zeros(6)


def q_loss(fixed):
    q_preds = net(states)
    if fixed:
        with torch.no_grad():                                   # the fix
            next_q_preds = net(next_states)
    else:
        next_q_preds = net(next_states)
    act_q_preds = q_preds.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    act_next_q_preds = next_q_preds.gather(-1, next_actions.unsqueeze(-1)).squeeze(-1)
    act_q_targets = rewards + 0.99 * (1 - dones) * act_next_q_preds
    return act_q_targets, torch.nn.functional.mse_loss(act_q_preds, act_q_targets)


def grad(fixed):
    net.zero_grad()
    target, loss = q_loss(fixed)
    loss.backward()
    return target, net.weight.grad.clone()


t_bug, g_bug = grad(False)
t_fix, g_fix = grad(True)
assert t_bug.requires_grad and not t_fix.requires_grad          # buggy: the TD target is differentiated
# semi-gradient reference: the same loss with an explicitly detached target
net.zero_grad()
target, _ = q_loss(False)
qp = net(states).gather(-1, actions.unsqueeze(-1)).squeeze(-1)
torch.nn.functional.mse_loss(qp, target.detach()).backward()
assert torch.allclose(net.weight.grad, g_fix)
assert not torch.allclose(g_bug, g_fix)                          # buggy gradient differs from the semi-gradient
print("CONFIRMED")
