"""Reproduction for `pymarl_double_q_mask_inplace`: oxwhirl/pymarl commit 406a8cd ("Fixing gradient computation error for newer versions of pytorch.").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `chosen_action_qvals = th.gather(mac_out[:, :-1], ...)` saves a view of `mac_out` for backward; the
double-Q branch then masks `mac_out[avail_actions == 0] = -9999999` in place, so `loss.backward()` raises
"modified by an inplace operation". The fix masks a detached clone instead.
"""

import torch as th

th.manual_seed(0)
agent = th.nn.Linear(3, 4)
obs = th.randn(2, 5, 2, 3)                       # batch, time, agents, features
actions = th.randint(0, 4, (2, 4, 2, 1))
avail_actions = (th.rand(2, 5, 2, 4) > 0.3).long()


def train(fixed):
    mac_out = th.stack([agent(obs[:, t]) for t in range(5)], dim=1)
    chosen_action_qvals = th.gather(mac_out[:, :-1], dim=3, index=actions).squeeze(3)
    if fixed:
        mac_out_detach = mac_out.clone().detach()         # the fix
        mac_out_detach[avail_actions == 0] = -9999999
        cur_max_actions = mac_out_detach[:, 1:].max(dim=3, keepdim=True)[1]
    else:
        mac_out[avail_actions == 0] = -9999999
        cur_max_actions = mac_out[:, 1:].max(dim=3, keepdim=True)[1]
    targets = th.randn(2, 4, 2) + cur_max_actions.squeeze(3).float()
    loss = ((chosen_action_qvals - targets.detach()) ** 2).mean()
    loss.backward()


try:
    train(False)
    raise AssertionError("expected an error")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
train(True)
print("CONFIRMED")
