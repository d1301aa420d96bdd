"""fresh22 real: cyoon1729/deep-Q-networks vanillaDQN/dqn.py:50 and noisyDQN/noisy_dqn.py:45 (GS421).

compute_loss: `next_Q = self.model.forward(next_states)`; `max_next_Q = torch.max(next_Q, 1)[0]`;
`expected_Q = rewards.squeeze(1) + self.gamma * max_next_Q`; `loss = self.MSE_loss(curr_Q, expected_Q)`; update()
backwards it. No no_grad, no detach, no target network: the TD target keeps the online network's graph, so the
backward also pushes the bootstrap value toward curr_Q (a residual-gradient update, not DQN's semi-gradient).
Run below with the same statements: the target requires grad and the gradient differs from the detached target's.
"""
import torch
from torch import nn

torch.manual_seed(0)


class DQN(nn.Module):                      # vanillaDQN/models.py's MLP shape
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(n_in, 128), nn.ReLU(), nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, n_out))

    def forward(self, s):
        return self.fc(s)


model = DQN(4, 2)
MSE_loss = nn.MSELoss()
gamma = 0.99
B = 32
states, next_states = torch.randn(B, 4), torch.randn(B, 4)
actions = torch.randint(0, 2, (B,))
rewards = torch.randn(B, 1)


def grads(detach):
    model.zero_grad()
    curr_Q = model.forward(states).gather(1, actions.unsqueeze(1))
    curr_Q = curr_Q.squeeze(1)
    next_Q = model.forward(next_states)
    max_next_Q = torch.max(next_Q, 1)[0]
    if detach:
        max_next_Q = max_next_Q.detach()
    expected_Q = rewards.squeeze(1) + gamma * max_next_Q       # dqn.py:50 / noisy_dqn.py:46
    assert expected_Q.requires_grad == (not detach)
    loss = MSE_loss(curr_Q, expected_Q)
    loss.backward()
    return torch.cat([p.grad.flatten() for p in model.parameters()])


g_as_written, g_semi = grads(False), grads(True)
diff = (g_as_written - g_semi).norm() / g_semi.norm()
print(f"TD target requires grad; relative gradient difference vs detached target: {diff:.3f}")
assert diff > 0.05
