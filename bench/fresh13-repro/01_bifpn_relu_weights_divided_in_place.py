"""EfficientDet.Pytorch models/bifpn.py:177-180 (BiFPNModule.forward): the fast-normalised fusion weights.

`w1 = self.relu1(self.w1); w1 /= torch.sum(w1, dim=0) + self.eps`: ReLU saves its output for backward, and the
in-place division overwrites that output, so the first backward of any loss through BiFPN raises.
"""
import torch
import torch.nn as nn

levels, eps = 5, 1e-4
w1_param = nn.Parameter(torch.Tensor(2, levels).fill_(0.5))
relu1 = nn.ReLU()
x = torch.randn(2, levels)

w1 = relu1(w1_param)
w1 /= torch.sum(w1, dim=0) + eps  # normalize
out = (w1 * x).sum()
try:
    out.backward()
    print("no error")
except RuntimeError as e:
    print("raises:", str(e)[:160])
