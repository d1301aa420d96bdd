"""Reproduction for `dien_pdqn_cont_loss_detached_action`: opendilab/DI-engine commit b1737994 ("fix(pu): current q value use the data action, fix cont loss detach bug, ...").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: P-DQN's continuous-parameter loss is `-Q(s, x(s)).mean()`, but the parent feeds `action_args.clone().detach()`
to Q, so `cont_loss.backward()` gives the continuous head no gradient and `self._cont_optimizer.step()` never changes it
(the grads go only to the discrete Q network, whose optimizer zeroes them); the fix passes `action_args` undetached.
"""

import torch

cont_head = torch.nn.Linear(4, 2)                 # x(s): continuous action parameters
dis_head = torch.nn.Linear(4 + 2, 3)              # Q(s, x)
cont_optimizer = torch.optim.Adam(cont_head.parameters(), lr=0.1)
obs = torch.randn(5, 4)


def cont_update(fixed):
    w0 = cont_head.weight.detach().clone()
    action_args = cont_head(obs)
    action_args_cp = action_args if fixed else action_args.clone().detach()
    q_value1 = dis_head(torch.cat([obs, action_args_cp], -1))
    cont_loss = -q_value1.sum(dim=-1).mean()
    cont_optimizer.zero_grad()
    cont_loss.backward()
    cont_optimizer.step()
    return cont_head.weight.grad, torch.equal(w0, cont_head.weight)


grad, unchanged = cont_update(fixed=False)
assert grad is None and unchanged                  # the continuous head is never trained
grad, unchanged = cont_update(fixed=True)
assert grad is not None and not unchanged

print("CONFIRMED")
