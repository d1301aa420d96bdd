"""fresh23 false: Kaixhin/spinning-up-basic ppo.py:56 (GS402).

gradsight: "This carries the previous iteration's graph, which the backward at line 59 frees. The next iteration's
backward then raises 'Trying to backward through the graph a second time'".

What the code does: the PPO update loop `for epoch in range(PPO_EPOCHS):` starts with
`if epoch > 0: policy, trajectories['value'] = agent(trajectories['state']);
trajectories['log_prob_action'] = policy.log_prob(trajectories['action'].detach())`.
Epoch 0 uses the rollout's log-probs (their graph is backwarded once, at line 59); every later epoch rebinds the
dict item to a fresh forward before line 56 reads it. The outer `for step` loop rebuilds `trajectories` from a new
`D` (line 44) each batch. No backward ever runs through a freed graph. Run below with the same statements
(models.py's ActorCritic, hyperparams' PPO_EPOCHS = 60 cut to 5, VALUE_EPOCHS = 5), for two batches.

Minimised with the base engine (/tmp/w23/min/a.py..h.py): a value bound before the loop and rebound inside it
under `if epoch > 0:` fires GS402 whether it is a dict item or a plain name, with or without an optimizer step,
with `if epoch != 0:` and even with `if True:`; the same rebinding without the `if` is quiet. The analysis takes
the path on which the `if` is skipped on a later iteration, which never happens: the condition on the loop counter
is false only on the first iteration, before any backward has run.
"""
import torch
from torch import nn, optim
from torch.distributions import Independent, Normal

torch.manual_seed(0)


class ActorCritic(nn.Module):                       # models.py:56-65, with Actor/Critic inlined
    def __init__(self, obs, act, hidden):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs, hidden), nn.Tanh(), nn.Linear(hidden, act))
        self.policy_log_std = nn.Parameter(torch.tensor([[0.0]]))
        self.critic = nn.Sequential(nn.Linear(obs, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, state):
        policy = Independent(Normal(self.actor(state), self.policy_log_std.exp()), 1)
        return policy, self.critic(state).squeeze(dim=1)


agent = ActorCritic(3, 2, 32)
actor_optimiser = optim.Adam(list(agent.actor.parameters()) + [agent.policy_log_std], lr=1e-3)
critic_optimiser = optim.Adam(agent.critic.parameters(), lr=1e-3)
PPO_EPOCHS, VALUE_EPOCHS, PPO_CLIP_RATIO = 5, 5, 0.2

for batch in range(2):                              # two passes of the outer `for step` loop's update
    D = []
    for t in range(16):                             # rollout, ppo.py:20-25
        state = torch.randn(1, 3)
        policy, value = agent(state)
        action = policy.sample()
        log_prob_action = policy.log_prob(action)
        D.append({'state': state, 'action': action, 'log_prob_action': log_prob_action,
                  'old_log_prob_action': log_prob_action.detach(), 'value': value,
                  'advantage': torch.randn(1), 'reward_to_go': torch.randn(1)})
    trajectories = {k: torch.cat([tr[k] for tr in D], dim=0) for k in D[0].keys()}   # ppo.py:44
    for epoch in range(PPO_EPOCHS):
        if epoch > 0:                                                                  # ppo.py:51-53
            policy, trajectories['value'] = agent(trajectories['state'])
            trajectories['log_prob_action'] = policy.log_prob(trajectories['action'].detach())
        policy_ratio = (trajectories['log_prob_action'] - trajectories['old_log_prob_action']).exp()   # line 56
        policy_loss = -torch.min(policy_ratio * trajectories['advantage'],
                                 torch.clamp(policy_ratio, 1 - PPO_CLIP_RATIO, 1 + PPO_CLIP_RATIO)
                                 * trajectories['advantage']).mean()
        actor_optimiser.zero_grad()
        policy_loss.backward()                                                          # line 59: no error
        actor_optimiser.step()
    for _ in range(VALUE_EPOCHS):                                                       # ppo.py:63-68
        value_loss = (trajectories['value'] - trajectories['reward_to_go']).pow(2).mean()
        critic_optimiser.zero_grad()
        value_loss.backward()
        critic_optimiser.step()
        trajectories['value'] = agent(trajectories['state'])[1]
    print(f"batch {batch}: {PPO_EPOCHS} PPO epochs and {VALUE_EPOCHS} value epochs ran, no backward error")

# contrast: without the `if epoch > 0` refresh, the second epoch's backward does raise
D_lp = agent(torch.randn(4, 3))[0].log_prob(torch.randn(4, 2))
try:
    for epoch in range(2):
        (D_lp.exp().mean()).backward()
    raise SystemExit("expected the second-backward error")
except RuntimeError as e:
    assert "second time" in str(e)
    print("contrast, no refresh:", str(e)[:60], "...")
