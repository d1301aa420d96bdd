"""Reproduction for `rlpyt_sac_pi_loss_updates_q`: astooke/rlpyt commit 6c545bf ("fixed wrong gradient flow in sac agent; separated optimizers for pi and q").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: SAC computed q_loss and pi_loss (`log_pi - min_log_target`, where the target comes from the Q networks
with grad) and called backward on all of them before one optimizer stepped every parameter, so the Q networks
also received the policy loss's gradient; the fix steps Q with only the Q losses and the policy with its own
optimizer.
"""

import torch

torch.manual_seed(0)
pi = torch.nn.Linear(3, 1)
q = torch.nn.Linear(3 + 1, 1)
obs, act, y = torch.randn(8, 3), torch.randn(8, 1), torch.randn(8, 1)


def q_loss():
    return 0.5 * ((y - q(torch.cat([obs, act], 1))) ** 2).mean()


def pi_loss():
    new_action = pi(obs)
    log_target = q(torch.cat([obs, new_action], 1))
    log_pi = -0.5 * new_action ** 2
    return (log_pi - log_target).mean()


# gradient the Q network should be updated with: only the Bellman error
q.zero_grad()
q_loss().backward()
want = q.weight.grad.clone()

# buggy: one optimizer over all parameters, every loss backpropagated before the step
q.zero_grad(); pi.zero_grad()
for loss in (q_loss(), pi_loss()):
    loss.backward()
buggy = q.weight.grad.clone()
assert not torch.allclose(buggy, want)                  # Q gradient polluted by the policy loss

# fixed: Q optimizer zeroes and steps after the Q losses only; pi loss handled by the pi optimizer
q.zero_grad()
for loss in (q_loss(),):
    loss.backward()
fixed = q.weight.grad.clone()                            # what q_optimizer.step() uses
assert torch.allclose(fixed, want)
pi.zero_grad()
pi_loss().backward()
assert pi.weight.grad is not None                        # pi_optimizer steps only pi parameters
print("CONFIRMED")
