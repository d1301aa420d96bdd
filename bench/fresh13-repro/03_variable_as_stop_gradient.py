"""Reinforcement-Implementation code/vpg.py:304 and code/acer.py:370-417: `Variable(t)` of a tensor with a graph
(under torch >= 0.4 the same as `t.detach()`) used as the stop-gradient of a policy-gradient weight, a baseline or a
Retrace target. GS203's claim (no gradient flows back through the copy) is true, and it is what the algorithm needs:
the policy loss still trains the actor through `logprobas`, and the advantage must be a constant."""
import torch
import torch.nn as nn
from torch.autograd import Variable

actor, baseline = nn.Linear(3, 2), nn.Linear(3, 1)
states, returns = torch.randn(5, 3), torch.randn(5, 1)
values = baseline(states)
logprobas = torch.log_softmax(actor(states), 1)[:, :1]
loss_policy = -(Variable(returns - values) * logprobas).mean()
loss_policy.backward()
print("actor gets a gradient:", actor.weight.grad is not None and bool(actor.weight.grad.abs().sum() > 0))
print("baseline gets none from the policy loss (intended):", baseline.weight.grad is None)
detached = -((returns - values).detach() * logprobas).mean()
print("same value as with .detach():", torch.allclose(loss_policy, detached))
