"""Reproduction for `timm_kd_inference_mode_target`: huggingface/pytorch-image-models commit 9037d8893f ("Keep as no_grad").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `apply_kd_loss` computes the teacher probabilities `prob_t` under `torch.inference_mode()`, making them
inference tensors; `kl_div(prob_s, prob_t)` must save `prob_t` for the student's backward, so the training
step raises "Inference tensors cannot be saved for backward"; the fix uses `torch.no_grad()`.
"""

import torch
import torch.nn.functional as F

torch.manual_seed(0)
student = torch.nn.Linear(6, 5)
teacher = torch.nn.Linear(6, 5)
inp = torch.randn(4, 6)


def kd_loss(fixed):
    prob_s = F.log_softmax(student(inp), dim=-1)
    ctx = torch.no_grad() if fixed else torch.inference_mode()      # fix / buggy
    with ctx:
        out_t = teacher(inp.detach())
        prob_t = F.softmax(out_t, dim=-1)
    return 0.5 * F.kl_div(prob_s, prob_t, reduction="batchmean")


try:
    kd_loss(fixed=False).backward()
    raise AssertionError("expected the KD loss to fail")
except RuntimeError as exc:
    assert "Inference tensors cannot be saved for backward" in str(exc)

student.zero_grad()
kd_loss(fixed=True).backward()
assert student.weight.grad is not None and teacher.weight.grad is None

print("CONFIRMED")
