"""Reproduction for `rlkit_dreamer_imagination_detach`: rail-berkeley/rlkit commit 14b7c10 ("bugfix for dynamics backprop").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `imagine_ahead` detaches every imagined feature (`get_feat(new_state).detach()`), so the
imagined rewards and returns have no path back through `img_step` to the sampled actions; the
actor's dynamics-backprop loss `-(imag_returns)` (the only return term with the default
reinforce_loss_scale=0) gives the actor zero gradient. The fix keeps the features attached and only
detaches the actor's input.
"""

import torch

torch.manual_seed(0)
dynamics = torch.nn.Linear(4 + 2, 4)        # world_model.img_step
reward = torch.nn.Linear(4, 1)              # world_model.reward
actor = torch.nn.Linear(4, 2)


def imagine_ahead(state, fixed, horizon=3):
    feats, next_feats = [], []
    for _ in range(horizon):
        if fixed:
            feat = state
            action = torch.tanh(actor(feat.detach()))
        else:
            feat = state.detach()
            action = torch.tanh(actor(feat))
        state = dynamics(torch.cat([state, action], -1))
        next_feat = state if fixed else state.detach()
        feats.append(feat)
        next_feats.append(next_feat)
    return torch.stack(feats), torch.stack(next_feats)


def actor_grad(fixed):
    actor.zero_grad()
    _, imag_next_feat = imagine_ahead(torch.randn(5, 4), fixed)
    imag_returns = reward(imag_next_feat).sum(0)
    dynamics_backprop_loss = -imag_returns.mean()
    dynamics_backprop_loss.backward()
    return actor.weight.grad


grad = actor_grad(fixed=False)
assert grad is None or torch.count_nonzero(grad) == 0   # buggy: the actor gets no dynamics gradient
assert torch.count_nonzero(actor_grad(fixed=True)) > 0

print("CONFIRMED")
