"""Reproduction for `mtl_yolo_matcher_targets_not_detached`: MultimediaTechLab/YOLO commit 94fae81 ("[Fix] loss function calculation, detach predicts").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `self.matcher(targets, (predicts_cls, predicts_box))` runs the task-aligned assigner on the live predictions;
its soft class targets `align_cls = one_hot * normalize_term` are built from the predicted IoUs and sigmoid scores, so
the BCE targets (and `cls_norm = targets_cls.sum()`) carry the graph and the loss also back-propagates through the
targets, giving the head wrong gradients; the fix passes `predicts_cls.detach(), predicts_box.detach()` to the matcher.
"""

import torch
import torch.nn.functional as F

torch.manual_seed(0)
logits = torch.randn(2, 6, 3, requires_grad=True)      # predicts_cls: batch x anchors x classes
target_cls = torch.randint(0, 3, (2, 6))


def matcher(predict_cls):
    cls_mat = predict_cls.sigmoid().gather(2, target_cls[..., None])   # predicted prob of the target class
    normalize_term = cls_mat / (cls_mat.amax(dim=1, keepdim=True) + 1e-9)
    return F.one_hot(target_cls, 3) * normalize_term                    # align_cls (soft targets)


def cls_grad(fixed):
    logits.grad = None
    targets_cls = matcher(logits.detach() if fixed else logits)
    cls_norm = targets_cls.sum()
    loss = F.binary_cross_entropy_with_logits(logits, targets_cls, reduction="none").sum() / cls_norm
    loss.backward()
    return targets_cls.requires_grad, logits.grad.clone()


buggy_req, buggy_g = cls_grad(False)
fixed_req, fixed_g = cls_grad(True)
assert buggy_req and not fixed_req            # the buggy targets carry the graph
assert not torch.allclose(buggy_g, fixed_g)   # so the head gets a different (wrong) gradient

print("CONFIRMED")
