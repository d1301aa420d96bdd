# fresh12 GS308 x3, real (reinforcement-learning-kr/lets-do-irl mujoco/gail/train_model.py:85, mujoco/vail/train_model.py:97,
# mujoco/ppo/ppo.py:57): the statements of train_actor_critic/train_model with the repository's Actor/Critic
# (3 Linear layers, tanh): the second backward raises after critic_optim.step().
# lets-do-irl mujoco/{gail,vail}/train_model.py and ppo/ppo.py: backward(retain_graph), critic step, backward again
import math
import torch, torch.nn as nn, torch.optim as optim

class Actor(nn.Module):
    def __init__(s, i, o, h=64):
        super().__init__(); s.fc1 = nn.Linear(i, h); s.fc2 = nn.Linear(h, h); s.fc3 = nn.Linear(h, o)
    def forward(s, x):
        x = torch.tanh(s.fc1(x)); x = torch.tanh(s.fc2(x)); mu = s.fc3(x); return mu, torch.exp(torch.zeros_like(mu))

class Critic(nn.Module):
    def __init__(s, i, h=64):
        super().__init__(); s.fc1 = nn.Linear(i, h); s.fc2 = nn.Linear(h, h); s.fc3 = nn.Linear(h, 1)
    def forward(s, x):
        x = torch.tanh(s.fc1(x)); x = torch.tanh(s.fc2(x)); return s.fc3(x)

def lpd(x, mu, std):
    return (-(x - mu).pow(2) / (2 * std.pow(2)) - 0.5 * math.log(2 * math.pi)).sum(1, keepdim=True)

actor, critic = Actor(11, 3), Critic(11)
actor_optim = optim.Adam(actor.parameters(), lr=3e-4)
critic_optim = optim.Adam(critic.parameters(), lr=3e-4, weight_decay=7e-4)
states, actions = torch.randn(64, 11), torch.randn(64, 3)
old_values = critic(states)
returns, advants = torch.randn(64), torch.randn(64)
mu, std = actor(states)
old_policy = lpd(actions, mu, std)
criterion = nn.MSELoss()
batch_index = torch.arange(16)
inputs = states[batch_index]
oldvalue_samples = old_values[batch_index].detach()
values = critic(inputs)
clipped_values = oldvalue_samples + torch.clamp(values - oldvalue_samples, -0.2, 0.2)
critic_loss = torch.max(criterion(clipped_values, returns.unsqueeze(1)[batch_index]),
                        criterion(values, returns.unsqueeze(1)[batch_index])).mean()
mu, std = actor(inputs)
ratio = torch.exp(lpd(actions[batch_index], mu, std) - old_policy.detach()[batch_index])
adv = advants.unsqueeze(1)[batch_index]
actor_loss = -torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv).mean()
loss = actor_loss + 0.5 * critic_loss
critic_optim.zero_grad()
loss.backward(retain_graph=True)
critic_optim.step()
actor_optim.zero_grad()
try:
    loss.backward()
    print("second backward ran")
except RuntimeError as e:
    print("RAISES:", str(e)[:160])
