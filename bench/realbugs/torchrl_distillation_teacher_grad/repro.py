"""Reproduction for `torchrl_distillation_teacher_grad`: pytorch/rl commit 8a743a87eb ("[BugFix] Fix distillation masks and teacher detaching").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The teacher log-probabilities are used in the KL term without `.detach()`, so the distillation loss back-propagates into the teacher; the fix detaches them.
"""

import torch

lm_prior = torch.nn.Linear(4, 5)
model = torch.nn.Linear(4, 5)
x = torch.randn(2, 4)

def run(detach):
    lm_prior.zero_grad()
    lm_scores = lm_prior(x) / 2.0
    if detach:
        lm_scores = lm_scores.detach().clone() / 1.0
    loss = torch.nn.functional.kl_div(torch.log_softmax(model(x), -1), torch.log_softmax(lm_scores, -1),
                                      log_target=True, reduction="batchmean")
    loss.backward()
    return lm_prior.weight.grad

assert run(False) is not None        # the fixed prior receives gradients
assert run(True) is None

print("CONFIRMED")
