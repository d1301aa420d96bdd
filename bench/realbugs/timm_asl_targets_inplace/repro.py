"""Reproduction for `timm_asl_targets_inplace`: huggingface/pytorch-image-models commit 39190f5f44 ("Remove inplace operators when calculating the loss").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `AsymmetricLossSingleLabel.forward` uses `targets = self.targets_classes` in `xs_pos * targets`
(saved for backward) and then applies label smoothing in place with
`self.targets_classes.mul_(1 - eps).add_(eps / num_classes)`, so backward raises "one of the variables needed
for gradient computation has been modified by an inplace operation" (the error quoted in the commit message);
the fix rebinds `self.targets_classes` to an out-of-place result.
"""

import torch

torch.manual_seed(0)
eps, gamma_pos, gamma_neg = 0.1, 1, 4


def asl(inputs, target, fixed):
    num_classes = inputs.size(-1)
    log_preds = torch.log_softmax(inputs, dim=-1)
    targets_classes = torch.zeros_like(inputs).scatter_(1, target.long().unsqueeze(1), 1)
    targets = targets_classes
    anti_targets = 1 - targets
    xs_pos = torch.exp(log_preds)
    xs_neg = 1 - xs_pos
    xs_pos = xs_pos * targets                         # saves `targets` for backward
    xs_neg = xs_neg * anti_targets
    asymmetric_w = torch.pow(1 - xs_pos - xs_neg, gamma_pos * targets + gamma_neg * anti_targets)
    log_preds = log_preds * asymmetric_w
    if fixed:
        targets_classes = targets_classes.mul(1 - eps).add(eps / num_classes)   # the fix
    else:
        targets_classes.mul_(1 - eps).add_(eps / num_classes)                  # buggy: in place on `targets`
    loss = -targets_classes.mul(log_preds)
    return loss.sum(dim=-1).mean()


logits = torch.randn(4, 5, requires_grad=True)
target = torch.tensor([0, 1, 2, 3])
try:
    asl(logits, target, fixed=False).backward()
    raise AssertionError("expected backward to raise")
except RuntimeError as exc:
    assert "modified by an inplace operation" in str(exc)

logits.grad = None
asl(logits, target, fixed=True).backward()
assert logits.grad is not None

print("CONFIRMED")
