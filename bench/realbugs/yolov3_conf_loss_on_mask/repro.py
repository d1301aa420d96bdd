"""Reproduction for `yolov3_conf_loss_on_mask`: eriklindernoren/PyTorch-YOLOv3 commit 7c67cf3 ("Bug fix in YOLOLayer.forward").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `loss_conf = self.bce_loss(conf_mask[conf_mask == 1], tconf[conf_mask == 1])` feeds the
constant mask (a `Variable(..., requires_grad=False)`) to the BCE instead of the predicted
confidences, so the confidence term adds a constant to the loss and the objectness output gets no
gradient; the fix passes `conf[conf_mask == 1]`.
"""

import torch

torch.manual_seed(0)
head = torch.nn.Linear(4, 3)
bce_loss = torch.nn.BCELoss()
features = torch.randn(6, 4)
tconf = (torch.rand(6) > 0.5).float()
conf_mask = torch.ones(6)
conf_mask[0] = 0
conf_mask.requires_grad_(False)


def conf_weight_grad(fixed):
    head.zero_grad()
    prediction = head(features)
    x = torch.sigmoid(prediction[:, 0])
    conf = torch.sigmoid(prediction[:, 1])
    loss_x = ((x - 0.5) ** 2).mean()
    if fixed:
        loss_conf = bce_loss(conf[conf_mask == 1], tconf[conf_mask == 1])        # the fix
    else:
        loss_conf = bce_loss(conf_mask[conf_mask == 1], tconf[conf_mask == 1])   # buggy: a constant
    assert loss_conf.requires_grad == fixed
    (loss_x + loss_conf).backward()
    return head.weight.grad[1]                                                   # row producing conf


assert torch.count_nonzero(conf_weight_grad(fixed=False)) == 0    # buggy: confidence is never trained
assert torch.count_nonzero(conf_weight_grad(fixed=True)) > 0

print("CONFIRMED")
