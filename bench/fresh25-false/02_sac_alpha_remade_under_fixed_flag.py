"""fresh25 false: johnjim0816/rl-tutorials joyrl/algos/SAC/agent.py:269 (GS402) and :273 (GS203).

`Agent.update()` (pranz24's SAC) runs `for i in range(self.n_epochs)`: critic step; `pi, log_pi, _ =
self.policy.sample(state_batch)`, `policy_loss = ((self.alpha * log_pi) - min_qf_pi).mean()`,
`policy_loss.backward()` (line 259), policy step; then `if self.automatic_entropy_tuning:` alpha loss, backward,
step, and `self.alpha = self.log_alpha.exp()` (269; graph alive, `alpha_tlogs = self.alpha.clone()`), `else:`
`alpha_tlogs = torch.tensor(self.alpha)` (273). `self.automatic_entropy_tuning` is set in `__init__` and never
changes, so the branch goes the same way in every iteration and every call:
* flag True: `self.alpha` is re-made after every backward at 259, so each ExpBackward graph is backwarded exactly
  once (by the next iteration's policy loss) and then replaced: no second backward through it (GS402 says the next
  backward after 259's raises).
* flag False: `self.alpha` is `cfg.alpha` (a float, or 0 for the deterministic policy) from `__init__` and never a
  tensor, so `torch.tensor(self.alpha)` copies a Python number (GS203 says the values come from
  `self.log_alpha.exp()`, line 269, which never runs in that configuration).
Run below with the same statements (small networks, random batches): 3 calls of update() with 4 epochs each run
without error with the flag on, and with it off alpha_tlogs is made from a float.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.distributions import Normal
from torch.optim import Adam

torch.manual_seed(0)


class QNetwork(nn.Module):
    def __init__(self, n_states, n_actions, hidden):
        super().__init__()
        self.q1 = nn.Sequential(nn.Linear(n_states + n_actions, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.q2 = nn.Sequential(nn.Linear(n_states + n_actions, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, s, a):
        x = torch.cat([s, a], 1)
        return self.q1(x), self.q2(x)


class GaussianPolicy(nn.Module):
    def __init__(self, n_states, n_actions, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_states, hidden), nn.ReLU(), nn.Linear(hidden, 2 * n_actions))

    def sample(self, s):
        mean, log_std = self.net(s).chunk(2, -1)
        normal = Normal(mean, log_std.clamp(-20, 2).exp())
        x_t = normal.rsample()
        y_t = torch.tanh(x_t)
        log_prob = (normal.log_prob(x_t) - torch.log(1 - y_t.pow(2) + 1e-6)).sum(1, keepdim=True)
        return y_t, log_prob, torch.tanh(mean)


class Agent:
    def __init__(self, automatic_entropy_tuning, n_states=3, n_actions=2, hidden=16, alpha=0.2):
        self.gamma, self.tau, self.alpha, self.n_epochs = 0.99, 0.005, alpha, 4
        self.automatic_entropy_tuning = automatic_entropy_tuning
        self.critic = QNetwork(n_states, n_actions, hidden)
        self.critic_optim = Adam(self.critic.parameters(), lr=3e-4)
        self.critic_target = QNetwork(n_states, n_actions, hidden)
        self.critic_target.load_state_dict(self.critic.state_dict())
        if self.automatic_entropy_tuning is True:
            self.target_entropy = -float(n_actions)
            self.log_alpha = torch.zeros(1, requires_grad=True)
            self.alpha_optim = Adam([self.log_alpha], lr=3e-4)
        self.policy = GaussianPolicy(n_states, n_actions, hidden)
        self.policy_optim = Adam(self.policy.parameters(), lr=3e-4)
        self.tlogs = []

    def update(self, batch_size=8):
        for i in range(self.n_epochs):
            state_batch, next_state_batch = torch.randn(batch_size, 3), torch.randn(batch_size, 3)
            action_batch, reward_batch = torch.rand(batch_size, 2) * 2 - 1, torch.randn(batch_size, 1)
            mask_batch = torch.ones(batch_size, 1)
            with torch.no_grad():
                next_state_action, next_state_log_pi, _ = self.policy.sample(next_state_batch)
                qf1_next_target, qf2_next_target = self.critic_target(next_state_batch, next_state_action)
                min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - self.alpha * next_state_log_pi
                next_q_value = reward_batch + mask_batch * self.gamma * (min_qf_next_target)
            qf1, qf2 = self.critic(state_batch, action_batch)
            qf_loss = F.mse_loss(qf1, next_q_value) + F.mse_loss(qf2, next_q_value)
            self.critic_optim.zero_grad()
            qf_loss.backward()
            self.critic_optim.step()

            pi, log_pi, _ = self.policy.sample(state_batch)
            qf1_pi, qf2_pi = self.critic(state_batch, pi)
            min_qf_pi = torch.min(qf1_pi, qf2_pi)
            policy_loss = ((self.alpha * log_pi) - min_qf_pi).mean()
            self.policy_optim.zero_grad()
            policy_loss.backward()                                       # agent.py:259
            self.policy_optim.step()

            if self.automatic_entropy_tuning:
                alpha_loss = -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()
                self.alpha_optim.zero_grad()
                alpha_loss.backward()
                self.alpha_optim.step()
                self.alpha = self.log_alpha.exp()                        # agent.py:269
                alpha_tlogs = self.alpha.clone()
            else:
                alpha_loss = torch.tensor(0.)
                alpha_tlogs = torch.tensor(self.alpha)                   # agent.py:273
            self.tlogs.append((type(self.alpha).__name__, alpha_tlogs.requires_grad))


on = Agent(automatic_entropy_tuning=True)
for call in range(3):
    on.update()                                                          # no "backward through the graph a second time"
print("flag on: 12 updates ran; self.alpha is a", type(on.alpha).__name__, "with a graph:", on.alpha.grad_fn)
assert isinstance(on.alpha, torch.Tensor) and on.alpha.grad_fn is not None

off = Agent(automatic_entropy_tuning=False)
for call in range(3):
    off.update()
print("flag off: (type of self.alpha, alpha_tlogs.requires_grad) at line 273:", set(off.tlogs))
assert set(off.tlogs) == {("float", False)}
