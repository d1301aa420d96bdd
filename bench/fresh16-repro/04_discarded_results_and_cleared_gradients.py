"""fresh16 (real, harmless): GS212/GS418/GS585 navneet-nmk/pytorch-rl `models/SAC.py:184, 195, 198, 262`,
GS212 `train_dqn.py:118`.

* SAC `calc_soft_value_function_error`: `real_values = q_values - log_probs; real_values.detach()` (thrown away):
  the value loss `MSELoss()(values, real_values)` back-propagates into the critic and the actor (real).
* SAC `calc_soft_q_function_error`: `y.detach()` thrown away, `y = r + gamma * self.target_value(next_states)`:
  the target network gets `.grad`, but no optimizer holds it (its update is a polyak copy through `.data`), and the
  critic's gradient is the same (harmless, GS212 and GS418).
* SAC `fit_batch`: `q_loss.backward(); self.critic_optim.zero_grad()`: the critic's gradients are cleared before
  any step, so the Q loss trains nothing (real).
* train_dqn: `for p in dqn_model.parameters(): p.grad.data.clamp(-1, 1)` clips nothing (real).
"""
import torch
import torch.nn as nn

critic, actor, value = nn.Linear(3, 1), nn.Linear(3, 1), nn.Linear(3, 1)
s = torch.randn(5, 3)
q_values, log_probs = critic(s), actor(s)
real_values = q_values - log_probs
real_values.detach()
nn.MSELoss()(value(s), real_values).backward()
print("value loss reaches critic:", critic.weight.grad is not None, "actor:", actor.weight.grad is not None)

opt = torch.optim.SGD(critic.parameters(), lr=0.1)
critic.zero_grad()
w0 = critic.weight.detach().clone()
nn.MSELoss()(critic(s), torch.randn(5, 1)).backward()
opt.zero_grad()
opt.step()
print("critic changed by the Q loss:", not torch.equal(w0, critic.weight.detach()))

lin = nn.Linear(3, 1)
(lin(s) * 100).sum().backward()
for p in lin.parameters():
    p.grad.data.clamp(-1, 1)
print("max |grad| after the 'clip':", max(p.grad.abs().max().item() for p in lin.parameters()))
