"""Reproduction for `openrlhf_dpo_loss_not_scalar`: OpenRLHF/OpenRLHF commit 3b92afe4 ("Fixed backward pass by ensuring loss is a scalar (#145)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `DPOLoss.forward` returned the per-example `losses = -F.logsigmoid(beta * logits)`; the trainer passes it to
`strategy.backward(loss, ...)` (DeepSpeed `model.backward(loss)`), and backward on a tensor with more than one element
and no explicit gradient raises "grad can be implicitly created only for scalar outputs". The fix returns `losses.mean()`.
"""

import torch
import torch.nn.functional as F

torch.manual_seed(0)
policy = torch.nn.Linear(4, 1)
beta = 0.1


def dpo_loss(fixed):
    chosen, rejected = torch.randn(3, 4), torch.randn(3, 4)
    policy_chosen_logps, policy_rejected_logps = policy(chosen).squeeze(-1), policy(rejected).squeeze(-1)
    reference_chosen_logps, reference_rejected_logps = torch.randn(3), torch.randn(3)
    pi_logratios = policy_chosen_logps - policy_rejected_logps
    ref_logratios = reference_chosen_logps - reference_rejected_logps
    logits = pi_logratios - ref_logratios
    losses = -F.logsigmoid(beta * logits)
    loss = losses.mean()
    return loss if fixed else losses


try:
    dpo_loss(False).backward()               # strategy.backward -> model.backward(loss)
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "only for scalar outputs" in str(e), e
dpo_loss(True).backward()
assert policy.weight.grad is not None

print("CONFIRMED")
