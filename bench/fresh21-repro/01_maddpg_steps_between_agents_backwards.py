"""fresh21 real: philtabor/Multi-Agent-Deep-Deterministic-Policy-Gradients maddpg.py:86/87 (GS308).

The statements of `MADDPG.learn` (maddpg.py:39-89) with the repository's ActorNetwork/CriticNetwork (networks.py) and
Agent.update_network_parameters (agent.py:35-59), on CPU, 3 agents as in the `simple_adversary` scenario main.py runs.
`mu` (every agent's actor output) and `new_actions` (every target actor's output) are built once before the agent loop;
agent 0's `actor.optimizer.step()` (line 87) and its target update (line 89) change, in place, weights those shared
graphs saved, so agent 1's backward raises. Run A is the repository as written (raises at the critic backward, line
80, because of the target update); run B drops the target update to show that the actor step alone (line 87) also
makes agent 1's `actor_loss.backward` (line 86) raise.
"""
import torch as T
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

T.manual_seed(0)


class CriticNetwork(nn.Module):
    def __init__(self, beta, input_dims, fc1_dims, fc2_dims, n_agents, n_actions):
        super().__init__()
        self.fc1 = nn.Linear(input_dims + n_agents * n_actions, fc1_dims)
        self.fc2 = nn.Linear(fc1_dims, fc2_dims)
        self.q = nn.Linear(fc2_dims, 1)
        self.optimizer = optim.Adam(self.parameters(), lr=beta)

    def forward(self, state, action):
        x = F.relu(self.fc1(T.cat([state, action], dim=1)))
        x = F.relu(self.fc2(x))
        return self.q(x)


class ActorNetwork(nn.Module):
    def __init__(self, alpha, input_dims, fc1_dims, fc2_dims, n_actions):
        super().__init__()
        self.fc1 = nn.Linear(input_dims, fc1_dims)
        self.fc2 = nn.Linear(fc1_dims, fc2_dims)
        self.pi = nn.Linear(fc2_dims, n_actions)
        self.optimizer = optim.Adam(self.parameters(), lr=alpha)

    def forward(self, state):
        x = F.relu(self.fc1(state))
        x = F.relu(self.fc2(x))
        return T.softmax(self.pi(x), dim=1)


class Agent:
    def __init__(self, actor_dims, critic_dims, n_actions, n_agents, gamma=0.95, tau=0.01):
        self.gamma, self.tau = gamma, tau
        self.actor = ActorNetwork(0.01, actor_dims, 64, 64, n_actions)
        self.critic = CriticNetwork(0.01, critic_dims, 64, 64, n_agents, n_actions)
        self.target_actor = ActorNetwork(0.01, actor_dims, 64, 64, n_actions)
        self.target_critic = CriticNetwork(0.01, critic_dims, 64, 64, n_agents, n_actions)
        self.update_network_parameters(tau=1)

    def update_network_parameters(self, tau=None):
        if tau is None:
            tau = self.tau
        target_actor_state_dict = dict(self.target_actor.named_parameters())
        actor_state_dict = dict(self.actor.named_parameters())
        for name in actor_state_dict:
            actor_state_dict[name] = tau * actor_state_dict[name].clone() + \
                (1 - tau) * target_actor_state_dict[name].clone()
        self.target_actor.load_state_dict(actor_state_dict)
        target_critic_state_dict = dict(self.target_critic.named_parameters())
        critic_state_dict = dict(self.critic.named_parameters())
        for name in critic_state_dict:
            critic_state_dict[name] = tau * critic_state_dict[name].clone() + \
                (1 - tau) * target_critic_state_dict[name].clone()
        self.target_critic.load_state_dict(critic_state_dict)


def learn(agents, batch, target_updates=True):
    actor_states, states, actions, rewards, actor_new_states, states_, dones = batch
    all_agents_new_actions, all_agents_new_mu_actions, old_agents_actions = [], [], []
    for agent_idx, agent in enumerate(agents):
        new_pi = agent.target_actor.forward(actor_new_states[agent_idx])
        all_agents_new_actions.append(new_pi)
        pi = agent.actor.forward(actor_states[agent_idx])
        all_agents_new_mu_actions.append(pi)
        old_agents_actions.append(actions[agent_idx])
    new_actions = T.cat([acts for acts in all_agents_new_actions], dim=1)
    mu = T.cat([acts for acts in all_agents_new_mu_actions], dim=1)
    old_actions = T.cat([acts for acts in old_agents_actions], dim=1)
    for agent_idx, agent in enumerate(agents):
        where = f"agent {agent_idx}"
        critic_value_ = agent.target_critic.forward(states_, new_actions).flatten()
        critic_value_[dones[:, 0]] = 0.0
        critic_value = agent.critic.forward(states, old_actions).flatten()
        target = rewards[:, agent_idx] + agent.gamma * critic_value_
        critic_loss = F.mse_loss(target, critic_value)
        agent.critic.optimizer.zero_grad()
        try:
            critic_loss.backward(retain_graph=True)               # maddpg.py:80
        except RuntimeError as e:
            return f"{where}: critic_loss.backward (line 80) raised: {str(e)[:110]}"
        agent.critic.optimizer.step()
        actor_loss = -T.mean(agent.critic.forward(states, mu).flatten())
        agent.actor.optimizer.zero_grad()
        try:
            actor_loss.backward(retain_graph=True)                # maddpg.py:86
        except RuntimeError as e:
            return f"{where}: actor_loss.backward (line 86) raised: {str(e)[:110]}"
        agent.actor.optimizer.step()                              # maddpg.py:87
        if target_updates:
            agent.update_network_parameters()                     # maddpg.py:89
    return "no error"


n_agents, n_actions, actor_dims, B = 3, 5, [8, 10, 10], 16
critic_dims = sum(actor_dims)


def batch():
    actor_states = [T.randn(B, d) for d in actor_dims]
    return (actor_states, T.cat(actor_states, 1), [T.rand(B, n_actions) for _ in range(n_agents)],
            T.randn(B, n_agents), [T.randn(B, d) for d in actor_dims], T.randn(B, critic_dims),
            T.zeros(B, n_agents, dtype=T.bool))


agents = [Agent(actor_dims[i], critic_dims, n_actions, n_agents) for i in range(n_agents)]
a = learn(agents, batch())
print("A (as written):", a)
agents = [Agent(actor_dims[i], critic_dims, n_actions, n_agents) for i in range(n_agents)]
b = learn(agents, batch(), target_updates=False)
print("B (without the target update):", b)
assert a.startswith("agent 1") and "modified by an inplace operation" in a
assert b.startswith("agent 1: actor_loss.backward (line 86)") and "modified by an inplace operation" in b
print("OK: the second agent's backward raises; the step of the first agent's actor (line 87) is enough")
