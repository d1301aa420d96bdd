"""Reproduction for `ptyt_dqn_target_aliases_pred`: philtabor/Youtube-Code-Repository commit 6c2ae92 ("fix bug in assignment of Qtarget").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `Qtarget = Qpred` makes the target the same tensor as the prediction, so the in-place
assignment of the TD targets also overwrites `Qpred`, and `MSELoss(Qtarget, Qpred)` compares a tensor
with itself: the loss and every gradient are zero and the network never learns. The fix uses
`Qtarget = Qpred.clone()`.
"""

import numpy as np
import torch

torch.manual_seed(0)
net = torch.nn.Linear(4, 3)
states = torch.randn(5, 4)
rewards = torch.randn(5)
maxA = torch.tensor([0, 1, 2, 0, 1])
indices = np.arange(5)


def learn(fixed):
    net.zero_grad()
    Qpred = net(states)
    Qtarget = Qpred.clone() if fixed else Qpred      # fixed / buggy
    Qtarget[indices, maxA] = rewards + 0.99
    loss = torch.nn.MSELoss()(Qtarget, Qpred)
    loss.backward()
    return loss.item(), net.weight.grad.abs().sum().item()


loss, grad = learn(fixed=False)
assert loss == 0.0 and grad == 0.0                   # buggy: the target is the prediction, nothing is learnt
loss, grad = learn(fixed=True)
assert loss > 0.0 and grad > 0.0

print("CONFIRMED")
