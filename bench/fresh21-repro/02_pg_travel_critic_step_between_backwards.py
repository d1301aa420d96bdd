"""fresh21 real: reinforcement-learning-kr/pg_travel unity/agent/ppo.py:100/103 (GS308).

`train_model`'s inner step with the repository's Actor/Critic (unity/model.py, tanh activation) and log_density
(unity/utils/utils.py): `loss = actor_loss + 0.5 * critic_loss; critic_optim.zero_grad();
loss.backward(retain_graph=True); critic_optim.step(); actor_optim.zero_grad(); loss.backward()`. The critic step
changes fc2/fc3 weights that the retained graph saved, so the second backward raises (the same statements as
lets-do-irl, real in fresh12). main.py runs train_model every iteration.
"""
import math
import types
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
args = types.SimpleNamespace(hidden_size=64, activation='tanh', clip_param=0.2, batch_size=8)


class Actor(nn.Module):
    def __init__(self, num_inputs, num_outputs, args):
        self.args = args
        super().__init__()
        self.fc1 = nn.Linear(num_inputs, args.hidden_size)
        self.fc2 = nn.Linear(args.hidden_size, args.hidden_size)
        self.fc3 = nn.Linear(args.hidden_size, args.hidden_size)
        self.fc4 = nn.Linear(args.hidden_size, num_outputs)

    def forward(self, x):
        x = F.tanh(self.fc1(x))
        x = F.tanh(self.fc2(x))
        x = F.tanh(self.fc3(x))
        mu = self.fc4(x)
        logstd = torch.zeros_like(mu)
        std = torch.exp(logstd)
        return mu, std, logstd


class Critic(nn.Module):
    def __init__(self, num_inputs, args):
        super().__init__()
        self.fc1 = nn.Linear(num_inputs, args.hidden_size)
        self.fc2 = nn.Linear(args.hidden_size, args.hidden_size)
        self.fc3 = nn.Linear(args.hidden_size, 1)

    def forward(self, x):
        x = F.tanh(self.fc1(x))
        x = F.tanh(self.fc2(x))
        return self.fc3(x)


def log_density(x, mu, std, logstd):
    var = std.pow(2)
    log_density = -(x - mu).pow(2) / (2 * var) - 0.5 * math.log(2 * math.pi) - logstd
    return log_density.sum(1, keepdim=True)


actor, critic = Actor(6, 2, args), Critic(6, args)
actor_optim = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_optim = torch.optim.Adam(critic.parameters(), lr=1e-3)
n = 32
states, actions = torch.randn(n, 6), torch.randn(n, 2)
returns, advants = torch.randn(n), torch.randn(n)
with torch.no_grad():
    mu, std, logstd = actor(states)
    old_policy = log_density(actions, mu, std, logstd)
    old_values = critic(states)
criterion = torch.nn.MSELoss()
batch_index = torch.LongTensor(np.arange(args.batch_size))
inputs = states[batch_index]
returns_samples = returns.unsqueeze(1)[batch_index]
advants_samples = advants.unsqueeze(1)[batch_index]
oldvalue_samples = old_values[batch_index].detach()
mu, std, logstd = actor(inputs)
ratio = torch.exp(log_density(actions[batch_index], mu, std, logstd) - old_policy.detach()[batch_index])
loss = ratio * advants_samples
values = critic(inputs)
clipped_values = oldvalue_samples + torch.clamp(values - oldvalue_samples, -args.clip_param, args.clip_param)
critic_loss = torch.max(criterion(clipped_values, returns_samples), criterion(values, returns_samples)).mean()
clipped_loss = torch.clamp(ratio, 1.0 - args.clip_param, 1.0 + args.clip_param) * advants_samples
actor_loss = -torch.min(loss, clipped_loss).mean()
loss = actor_loss + 0.5 * critic_loss
critic_optim.zero_grad()
loss.backward(retain_graph=True)     # ppo.py:99
critic_optim.step()                  # ppo.py:100
actor_optim.zero_grad()
try:
    loss.backward()                  # ppo.py:103
    raise SystemExit("no error: unexpected")
except RuntimeError as e:
    print("second backward raised:", str(e)[:110])
    assert "modified by an inplace operation" in str(e)
print("OK: the critic step between the two backwards makes the second one raise")
