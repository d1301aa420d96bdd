"""Reproduction for `torchrl_composite_entropy_logged`: pytorch/rl commit f29bace90f ("Detach composite entropy").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `td_out.set("composite_entropy", entropy)` puts a tensor with its graph into the loss output that training loops log and keep, so the logged values keep the graph; the fix stores `entropy.detach()`.
"""

import torch

policy = torch.nn.Linear(3, 2)
logits = policy(torch.randn(4, 3))
entropy = torch.distributions.Categorical(logits=logits).entropy()
td_out = {"composite_entropy": entropy}            # buggy: logged with its graph
assert td_out["composite_entropy"].grad_fn is not None
td_out = {"composite_entropy": entropy.detach()}   # the fix
assert td_out["composite_entropy"].grad_fn is None

print("CONFIRMED")
