"""fresh23 real: Rafael1s/Deep-Reinforcement-Learning-Algorithms, six SAC agents (GS308, 12 findings: the step line
and the backward line of each): Ant-PyBulletEnv-Soft-Actor-Critic, BipedalWalker-Soft-Actor-Critic,
HopperBulletEnv-v0-SAC and Walker2DBulletEnv-v0_SAC `sac_agent.py:83/90` (BipedalWalker 70/77), Minitaur- and
MinitaurDuck-Soft-Actor-Critic `sac_agent.py:181/188`.

`update_parameters` builds `qf1_pi, qf2_pi = self.critic(state_batch, pi)` and `policy_loss` BEFORE the critic
updates, then runs `qf1_loss.backward(); self.critic_optim.step()` (and the same for qf2), and only then
`policy_loss.backward()`. The policy loss's graph goes through the critic's Linear layers, which saved their weights
(to differentiate with respect to `pi`); Adam's step changed those weights in place, so the policy backward raises
"one of the variables needed for gradient computation has been modified by an inplace operation" on the first
update, with every torch since 1.5. Run below with the same QNetwork/GaussianPolicy and statements.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal
from torch.optim import Adam

torch.manual_seed(0)


class QNetwork(nn.Module):                     # model.py:16-49
    def __init__(self, num_inputs, num_actions, hidden_dim):
        super().__init__()
        self.linear1 = nn.Linear(num_inputs + num_actions, hidden_dim)
        self.linear2 = nn.Linear(hidden_dim, hidden_dim)
        self.linear3 = nn.Linear(hidden_dim, 1)
        self.linear4 = nn.Linear(num_inputs + num_actions, hidden_dim)
        self.linear5 = nn.Linear(hidden_dim, hidden_dim)
        self.linear6 = nn.Linear(hidden_dim, 1)

    def forward(self, state, action):
        xu = torch.cat([state, action], 1)
        x1 = self.linear3(F.relu(self.linear2(F.relu(self.linear1(xu)))))
        x2 = self.linear6(F.relu(self.linear5(F.relu(self.linear4(xu)))))
        return x1, x2


class GaussianPolicy(nn.Module):               # model.py:52-99
    def __init__(self, num_inputs, num_actions, hidden_dim):
        super().__init__()
        self.linear1 = nn.Linear(num_inputs, hidden_dim)
        self.linear2 = nn.Linear(hidden_dim, hidden_dim)
        self.mean_linear = nn.Linear(hidden_dim, num_actions)
        self.log_std_linear = nn.Linear(hidden_dim, num_actions)

    def sample(self, state):
        x = F.relu(self.linear2(F.relu(self.linear1(state))))
        mean, log_std = self.mean_linear(x), torch.clamp(self.log_std_linear(x), -20, 2)
        normal = Normal(mean, log_std.exp())
        x_t = normal.rsample()
        y_t = torch.tanh(x_t)
        log_prob = (normal.log_prob(x_t) - torch.log(1 - y_t.pow(2) + 1e-6)).sum(1, keepdim=True)
        return y_t, log_prob, torch.tanh(mean)


n_obs, n_act, B, gamma, alpha = 8, 2, 32, 0.99, 0.2
critic, critic_target, policy = QNetwork(n_obs, n_act, 64), QNetwork(n_obs, n_act, 64), GaussianPolicy(n_obs, n_act, 64)
critic_target.load_state_dict(critic.state_dict())
critic_optim, policy_optim = Adam(critic.parameters(), lr=3e-4), Adam(policy.parameters(), lr=3e-4)

state_batch, next_state_batch = torch.randn(B, n_obs), torch.randn(B, n_obs)
action_batch, reward_batch, mask_batch = torch.rand(B, n_act) * 2 - 1, torch.randn(B, 1), torch.ones(B, 1)

with torch.no_grad():
    next_state_action, next_state_log_pi, _ = policy.sample(next_state_batch)
    q1t, q2t = critic_target(next_state_batch, next_state_action)
    next_q_value = reward_batch + mask_batch * gamma * (torch.min(q1t, q2t) - alpha * next_state_log_pi)
qf1, qf2 = critic(state_batch, action_batch)
qf1_loss, qf2_loss = F.mse_loss(qf1, next_q_value), F.mse_loss(qf2, next_q_value)
pi, log_pi, _ = policy.sample(state_batch)
qf1_pi, qf2_pi = critic(state_batch, pi)
policy_loss = ((alpha * log_pi) - torch.min(qf1_pi, qf2_pi)).mean()

critic_optim.zero_grad(); qf1_loss.backward(); critic_optim.step()       # sac_agent.py:81-83
critic_optim.zero_grad(); qf2_loss.backward(); critic_optim.step()       # 85-87
policy_optim.zero_grad()
try:
    policy_loss.backward()                                               # 90: raises
    raise SystemExit("expected the in-place modification error")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
    print("policy_loss.backward() after the critic steps:", str(e)[:90], "...")

# contrast: the policy backward before the critic steps (or a fresh critic forward) works
pi, log_pi, _ = policy.sample(state_batch)
policy_loss = ((alpha * log_pi) - torch.min(*critic(state_batch, pi))).mean()
policy_optim.zero_grad(); policy_loss.backward(); policy_optim.step()
print("contrast, recomputed after the critic steps: policy update ran")
