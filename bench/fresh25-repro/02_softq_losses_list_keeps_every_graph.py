"""fresh25 real: johnjim0816/rl-tutorials joyrl/algos/SoftQ/softq.py:58 (GS404).

`SoftQ.__init__` makes `self.losses = [] # save losses`; `update()` (called once per environment step by
SoftQ/task0.py's training loop) computes `loss = F.mse_loss(self.policy_net(state_batch).gather(1, action), y)`,
runs `self.losses.append(loss)`, then `zero_grad(); loss.backward(); step()`. Nothing reads or clears
`self.losses`, so every update's loss tensor, with its graph (the Q-network's nodes and the gather's saved index),
is kept for the whole run. Run below with the same statements: the list's graphs are all alive and the number of
graph nodes it holds grows by the same amount at every update.
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


def n_nodes_all(ts):
    seen, stack = set(), [t.grad_fn for t in ts]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


class SoftQ:
    def __init__(self, model, alpha=4.0, gamma=0.99):
        self.alpha, self.gamma = alpha, gamma
        self.policy_net = model
        self.target_net = model
        self.optimizer = torch.optim.Adam(self.policy_net.parameters(), lr=1e-3)
        self.losses = []  # save losses

    def update(self, batch_size=8):
        state_batch = torch.randn(batch_size, 4)
        action_batch = torch.randint(0, 2, (batch_size, 1)).float()
        reward_batch = torch.randn(batch_size, 1)
        next_state_batch = torch.randn(batch_size, 4)
        done_batch = torch.zeros(batch_size, 1)
        with torch.no_grad():
            next_q = self.target_net(next_state_batch)
            next_v = self.alpha * torch.log(torch.sum(torch.exp(next_q / self.alpha), dim=1, keepdim=True))
            y = reward_batch + (1 - done_batch) * self.gamma * next_v
        loss = F.mse_loss(self.policy_net(state_batch).gather(1, action_batch.long()), y)
        self.losses.append(loss)                                      # softq.py:58
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


agent = SoftQ(nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2)))
counts = []
for step in range(6):
    agent.update()
    counts.append(n_nodes_all(agent.losses))
print("graph nodes held by agent.losses after each update:", counts)
assert all(t.requires_grad and t.grad_fn is not None for t in agent.losses)
assert all(b > a for a, b in zip(counts, counts[1:]))
assert len({b - a for a, b in zip(counts, counts[1:])}) == 1
