"""Reproduction for `semseg_pspnet_inplace_dropout_after_relu`: meetps/pytorch-semseg commit 60a096ee ("Fix #96 and #104 in pspnet.py").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: PSPNet applies `nn.Dropout2d(p=0.1, inplace=True)` to the output of a conv-BN-`ReLU(inplace=True)` block;
in training the in-place dropout overwrites the ReLU output that ReLU saved for backward, so `loss.backward()` raises
"modified by an inplace operation"; the fix makes the dropout out of place.
"""

import torch
import torch.nn as nn

torch.manual_seed(0)
cbr_final = nn.Sequential(nn.Conv2d(3, 4, 3, 1, 1, bias=False), nn.BatchNorm2d(4), nn.ReLU(inplace=True))
classification = nn.Conv2d(4, 2, 1)


def forward(x, dropout):
    x = cbr_final(x)
    x = dropout(x)
    return classification(x)


x = torch.randn(2, 3, 5, 5)
try:
    forward(x, nn.Dropout2d(p=0.1, inplace=True)).sum().backward()     # buggy, training mode
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
forward(x, nn.Dropout2d(p=0.1, inplace=False)).sum().backward()        # fixed
assert classification.weight.grad is not None

print("CONFIRMED")
