"""Reproduction for `onmt_lm_prior_not_detached`: OpenNMT/OpenNMT-py commit e3fa1b231e ("fix (#2306)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The LM-prior scores used as a distillation target are not detached, so the loss back-propagates into the language-model prior, which should stay fixed; the fix detaches them.
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
