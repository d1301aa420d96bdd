"""fresh16 (real): GS404 navneet-nmk/pytorch-rl `models/A2C.py:279, 280`, `models/cvae_gan.py:567, 575, 580`,
`Training/trainer_vae.py:296`.

* A2C `train`: `actor_losses.append(actor_loss)` / `critic_losses.append(value_loss)` after backward, for the whole
  run; cvae_gan `train`: `cummulative_loss_discriminator += loss_d` (and the generator's, encoder's), reset per
  epoch; trainer_vae `inference`: `self.model.eval()` then `self.latents.append(z)` per batch with grad mode on.
  Each keeps one more graph per step: the number of graph nodes reachable from what is kept grows.
* A2C also backwards `actor_loss` through `advantages = true_state_values - state_values` after
  `value_loss.backward()` freed the critic's graph: that raises in the first iteration (an earlier bug gradsight
  does not report), so the append is reached only once that is fixed.
"""
import torch
import torch.nn as nn


def nodes(t):
    seen, todo = set(), [t.grad_fn]
    while todo:
        f = todo.pop()
        if f is None or f in seen:
            continue
        seen.add(f)
        todo.extend(g for g, _ in f.next_functions)
    return len(seen)


actor, critic = nn.Linear(4, 2), nn.Linear(4, 1)
actor_losses = []
for step in range(5):
    s = torch.randn(8, 4)
    value_loss = critic(s).pow(2).mean()
    value_loss.backward()
    actor_loss = -actor(s).log_softmax(1)[:, 0].mean()
    actor_loss.backward()
    actor_losses.append(actor_loss)
print("A2C-like: kept graphs", sum(nodes(l) for l in actor_losses), "nodes after 5 steps")

cum = 0
for step in range(5):
    loss_d = critic(torch.randn(8, 4)).mean()
    cum += loss_d
    loss_d.backward()
    print("cvae-like: cumulative loss graph", nodes(cum), "nodes after", step + 1, "steps")

# A2C's order: the critic backward frees what the actor loss needs.
s = torch.randn(8, 4)
state_values = critic(s)
advantages = torch.randn(8, 1) - state_values
action_gain = (actor(s).log_softmax(1)[:, :1] * advantages).mean()
advantages.pow(2).mean().backward()
try:
    (-action_gain).backward()
    print("A2C order: no error")
except RuntimeError as e:
    print("A2C order raises:", str(e).split("\n")[0][:90])
