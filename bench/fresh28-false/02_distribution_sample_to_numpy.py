"""GS201 false: PacktPublishing/PyTorch-1.x-Reinforcement-Learning-Cookbook Chapter08/chapter8/actor_critic_mountaincar.py:77.

`ActorCriticModel.forward` builds `dist = self.distribution(mu.view(1, ).data, sigma.view(1, ).data)` with
`self.distribution = torch.distributions.Normal`, and `get_action` does `action = dist.sample().numpy()`. The claim is
that the sample requires grad so `.numpy()` raises. It does not: `.data` gives the Normal graph-free parameters, and
`Distribution.sample()` runs under `torch.no_grad()` anyway (only `rsample()` keeps a graph), so even a Normal built
from graph-carrying parameters gives a sample that converts. (Line 78, `dist.log_prob(action[0])` on a NumPy scalar,
does raise under today's argument validation: another problem, not the one reported.)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCriticModel(nn.Module):
    def __init__(self, n_input, n_output, n_hidden):
        super(ActorCriticModel, self).__init__()
        self.fc = nn.Linear(n_input, n_hidden)
        self.mu = nn.Linear(n_hidden, n_output)
        self.sigma = nn.Linear(n_hidden, n_output)
        self.value = nn.Linear(n_hidden, 1)
        self.distribution = torch.distributions.Normal

    def forward(self, x):
        x = F.relu(self.fc(x))
        mu = 2 * torch.tanh(self.mu(x))
        sigma = F.softplus(self.sigma(x)) + 1e-5
        dist = self.distribution(mu.view(1, ).data, sigma.view(1, ).data)
        value = self.value(x)
        return dist, value


class PolicyNetwork():
    def __init__(self, n_state, n_action, n_hidden, lr=0.001):
        self.model = ActorCriticModel(n_state, n_action, n_hidden)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr)

    def predict(self, s):
        self.model.training = False
        return self.model(torch.Tensor(s))

    def get_action(self, s):
        dist, state_value = self.predict(s)
        action = dist.sample().numpy()
        return action, dist, state_value


estimator = PolicyNetwork(2, 1, 50)
for _ in range(5):
    action, dist, value = estimator.get_action([0.1, -0.2])  # line 77's statement runs: no error
    assert action.shape == (1,)
    assert value.requires_grad  # the critic's output does carry a graph; the distribution does not
assert not dist.loc.requires_grad and not dist.scale.requires_grad

# Even from graph-carrying parameters, sample() gives a tensor that converts (it runs under no_grad).
mu = torch.zeros(1, requires_grad=True) * 2
d = torch.distributions.Normal(mu, torch.ones(1))
assert not d.sample().requires_grad
d.sample().numpy()
assert d.rsample().requires_grad  # rsample is the one that keeps the graph
try:
    d.rsample().numpy()
    raise AssertionError("rsample().numpy() should raise")
except RuntimeError as e:
    assert "requires grad" in str(e)

# Line 78 (not reported) does raise today: log_prob of a NumPy scalar.
try:
    dist.log_prob(action[0])
    print("line 78 ran")
except (ValueError, TypeError, AttributeError) as e:
    print("line 78 raises (a separate problem):", type(e).__name__, str(e)[:80])
print("ok")
