"""fresh23 harmless claims: the statement does what gradsight says, the consequence never happens.

A. GS418, Rafael1s/Deep-Reinforcement-Learning-Algorithms Cartpole-Double-Deep-Q-Learning/ddqn_agent.py:110,
   LunarLanderContinuous-v2-DDPG/ddpg_agent_1.py:123 and ddpg_agent_2.py:116,
   Project-2_Continuous-Control-Reacher-DDPG/ddpg_agent.py:115, Project-3_Collaboration_Competition-Tennis-Maddpg/
   ddpg_agent.py:104: the TD target (`self.q_target(next_states).gather(...)` with the action index from the
   detached online net; `self.critic_target(next_states, self.actor_target(next_states))`) is built without
   no_grad/detach, so backward runs into the target networks and fills their `.grad`. True. But no optimizer holds
   a target network, they are updated by `.data.copy_` (soft_update/hard_update), and the online network's
   gradient is the same as with a detached target (run A: equal gradients; the target's .grad is filled and unused).
B. GS516, tinyzqh/light_mappo utils/valuenorm.py:21-23 and cyanrain7/TRPO-in-MARL utils/popart.py:21-23:
   `nn.Parameter(..., requires_grad=False).to(**tpdv)` running statistics of the trainer's value normaliser
   (r_mappo.py:58 `ValueNorm(1, device=self.device)`; happo/hatrpo_trainer.py `PopArt(1, device=self.device)`).
   On CUDA they are plain tensors missing from state_dict()/.to(). True. But the normaliser is made on its device,
   updated in place (under no_grad, or on detached input), and never saved or moved: the runners save only the
   actor/critic state dicts. Nothing is lost (run B: the copying move, a dtype change standing for the device,
   normalises and denormalises as the registered one does). Same verdict as pymarl2's value_norm.py in fresh13.
C. GS404, oxwhirl/wqmix src/learners/coma_learner.py:125: `q_vals[:, t] = q_t.view(...)` in `_train_critic`'s
   reversed time loop chains every step's critic graph into `q_vals` (made per call by `th.zeros_like`). True. But
   the loop is over the time steps of one batch, `q_vals` is used by `train` only through detached values
   (`baseline = (...).detach()`, `advantages = (q_taken - baseline).detach()`), and it dies when `train` returns:
   bounded by the episode length, no growth across training calls (run C). Same verdict as pymarl2's
   coma_learner.py:130 in fresh13.
"""
import gc
import weakref

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

# A: a DDPG critic update with the target as written, and with a detached target
actor_t, critic_l, critic_t = nn.Linear(4, 2), nn.Linear(6, 1), nn.Linear(6, 1)
critic_t.load_state_dict(critic_l.state_dict())
states, actions, rewards, next_states, dones = (torch.randn(16, 4), torch.randn(16, 2), torch.randn(16, 1),
                                                torch.randn(16, 4), torch.zeros(16, 1))
grads = []
for detach in (False, True):
    critic_l.zero_grad()
    Q_targets_next = critic_t(torch.cat([next_states, actor_t(next_states)], 1))
    Q_targets = rewards + 0.99 * Q_targets_next * (1 - dones)
    if detach:
        Q_targets = Q_targets.detach()
    F.mse_loss(critic_l(torch.cat([states, actions], 1)), Q_targets).backward()
    grads.append(critic_l.weight.grad.clone())
assert torch.allclose(grads[0], grads[1])
assert critic_t.weight.grad is not None and actor_t.weight.grad is not None
print("A: online critic gradient equal with and without detach; target nets' .grad filled but held by no optimizer")


# B: ValueNorm with the copying move
class ValueNorm(nn.Module):                                    # light_mappo utils/valuenorm.py
    def __init__(self, input_shape, tpdv, beta=0.99999, epsilon=1e-5):
        super().__init__()
        self.beta, self.epsilon, self.tpdv = beta, epsilon, tpdv
        self.running_mean = nn.Parameter(torch.zeros(input_shape), requires_grad=False).to(**tpdv)
        self.running_mean_sq = nn.Parameter(torch.zeros(input_shape), requires_grad=False).to(**tpdv)
        self.debiasing_term = nn.Parameter(torch.tensor(0.0), requires_grad=False).to(**tpdv)

    def running_mean_var(self):
        m = self.running_mean / self.debiasing_term.clamp(min=self.epsilon)
        sq = self.running_mean_sq / self.debiasing_term.clamp(min=self.epsilon)
        return m, (sq - m ** 2).clamp(min=1e-2)

    @torch.no_grad()
    def update(self, x):
        x = x.to(**self.tpdv)
        self.running_mean.mul_(self.beta).add_(x.mean(0) * (1.0 - self.beta))
        self.running_mean_sq.mul_(self.beta).add_((x ** 2).mean(0) * (1.0 - self.beta))
        self.debiasing_term.mul_(self.beta).add_(1.0 * (1.0 - self.beta))

    def normalize(self, x):
        m, v = self.running_mean_var()
        return (x.to(**self.tpdv) - m) / torch.sqrt(v)


outs = []
for dtype in (torch.float32, torch.float64):                   # registered / copied (stands for cuda)
    vn = ValueNorm(1, dict(dtype=dtype, device="cpu"))
    torch.manual_seed(1)
    for _ in range(10):
        vn.update(torch.randn(64, 1) * 3 + 5)
    outs.append(vn.normalize(torch.tensor([[5.0], [8.0]])).float())
    print(f"B: dtype {dtype}: state_dict keys {list(vn.state_dict())}, normalised {outs[-1].flatten().tolist()}")
assert torch.allclose(outs[0], outs[1], atol=1e-4)

# C: the COMA critic time loop
critic = nn.Linear(5, 3)
copt = torch.optim.RMSprop(critic.parameters(), lr=1e-3)


def train_critic(T=6, bs=4):
    q_vals = torch.zeros(bs, T, 3)
    for t in reversed(range(T)):
        q_t = critic(torch.randn(bs, 5))
        q_vals[:, t] = q_t                                     # coma_learner.py:125
        loss = (q_t.gather(1, torch.zeros(bs, 1, dtype=torch.long)) - torch.randn(bs, 1)).pow(2).mean()
        copt.zero_grad(); loss.backward(); copt.step()
    return q_vals


refs = []
for step in range(3):
    q_vals = train_critic()
    baseline = q_vals.sum(-1).detach()                         # train(): only detached uses
    assert q_vals.grad_fn is not None                          # the chained graph hangs on q_vals
    refs.append(weakref.ref(q_vals))
    del q_vals, baseline
    gc.collect()
    assert all(r() is None for r in refs), "an earlier call's graph is still alive"
print("C: each call's chained critic graphs die with the call; nothing grows across training calls")
