"""Reproduction for `onmt_lm_prior_not_detached`: OpenNMT/OpenNMT-py commit e3fa1b231e ("fix (#2306)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the LM prior's scores keep their graph (eval mode does not stop gradients); `log_softmax` saves
its output and the in-place writes `lm_scores[:, unk] = -50` / `lm_scores[:, eos] -= 20` modify it, so
backward raises "modified by an inplace operation"; detaching the prior's scores fixes it.
"""

import torch
import torch.nn.functional as F

lm_prior = torch.nn.Linear(4, 6).eval()
generator = torch.nn.Linear(4, 6)
x = torch.randn(3, 4)


def run(detach):
    scores = F.log_softmax(generator(x) / 2.0, dim=-1)
    lm_scores = lm_prior(x) / 2.0
    if detach:
        lm_scores = lm_scores.detach().clone()
    lm_scores = F.log_softmax(lm_scores, dim=-1)
    lm_scores[:, 1] = -50
    lm_scores[:, 2] -= 20
    F.kl_div(scores, lm_scores, reduction="none", log_target=True).sum().backward()


try:
    run(False)
    raise AssertionError("expected an in-place error")
except RuntimeError as exc:
    assert "modified by an inplace operation" in str(exc), exc
run(True)
assert lm_prior.weight.grad is None

print("CONFIRMED")
