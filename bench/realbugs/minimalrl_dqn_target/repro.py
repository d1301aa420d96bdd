"""Reproduction for `minimalrl_dqn_target`: seungeunrho/minimalRL commit fa8a05bb18 ("Update dqn.py").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The TD target `r + gamma * max_q_prime * done_mask` is built from the target network in grad mode and not detached, so `loss.backward()` also accumulates gradients into `q_target` (never stepped or zeroed); the fix detaches the target (semi-gradient TD).
"""

import torch

import torch.nn.functional as F
q = torch.nn.Linear(4, 2)
q_target = torch.nn.Linear(4, 2)
s, s_prime = torch.randn(3, 4), torch.randn(3, 4)
r, done_mask, gamma = torch.ones(3, 1), torch.ones(3, 1), 0.98

def step(detach):
    q.zero_grad(); q_target.zero_grad()
    q_a = q(s).max(1, keepdim=True)[0]
    max_q_prime = q_target(s_prime).max(1)[0].unsqueeze(1)
    target = r + gamma * max_q_prime * done_mask
    loss = F.smooth_l1_loss(q_a, target.detach() if detach else target)
    loss.backward()
    return q_target.weight.grad

assert step(False) is not None        # gradients flow into the target network
assert step(True) is None

print("CONFIRMED")
