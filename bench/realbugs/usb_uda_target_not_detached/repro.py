"""Reproduction for `usb_uda_target_not_detached`: microsoft/Semi-supervised-learning commit f31147c ("Fix uda detach bug").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: With the concatenated forward (use_cat), the weak-view logits carry the model's graph, so the
KL target `F.softmax(logits_x_ulb_w / T)` is not detached and the unsupervised loss also pushes the
weak-view predictions toward the strong view; the fix adds `.detach()` to the target.
"""

import torch
import torch.nn.functional as F

torch.manual_seed(0)
model = torch.nn.Linear(4, 3)
x_w, x_s = torch.randn(2, 4), torch.randn(2, 4)
T = 0.4


def grad_through_weak(fixed):
    model.zero_grad()
    logits = model(torch.cat((x_w, x_s)))
    logits_x_ulb_w, logits_x_ulb_s = logits.chunk(2)
    logits_x_ulb_w.retain_grad()
    target = F.softmax(logits_x_ulb_w / T, dim=-1)
    if fixed:
        target = target.detach()                       # the fix
    unsup_loss = F.kl_div(F.softmax(logits_x_ulb_s, dim=-1).log(), target, reduction='none').sum(dim=1).mean()
    unsup_loss.backward()
    return logits_x_ulb_w.grad


g_bug = grad_through_weak(False)
assert g_bug is not None and g_bug.abs().sum() > 0      # buggy: gradient flows into the weak-view target
g_fix = grad_through_weak(True)
assert g_fix is None or g_fix.abs().sum() == 0          # fixed: the target is a constant
print("CONFIRMED")
