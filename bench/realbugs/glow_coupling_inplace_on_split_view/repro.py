"""Reproduction for `glow_coupling_inplace_on_split_view`: chaiyujin/glow-pytorch 3aa18c3b (Fixed un-computable gradients).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn as nn

torch.manual_seed(0)


def split_feature(tensor, type="split"):      # glow/thops.py
    C = tensor.size(1)
    if type == "split":
        return tensor[:, :C // 2, ...], tensor[:, C // 2:, ...]
    return tensor[:, 0::2, ...], tensor[:, 1::2, ...]


invconv = nn.Conv2d(4, 4, 1)
f = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 3, padding=1))


def normal_flow(x, fixed):
    z = invconv(x)
    z1, z2 = split_feature(z, "split")
    h = f(z1)
    shift, scale = split_feature(h, "cross")
    scale = torch.sigmoid(scale + 2.)
    if fixed:
        z2 = z2 + shift
        z2 = z2 * scale
    else:
        z2 += shift                    # buggy: writes into z's storage, which f saved through z1
        z2 *= scale
    logdet = torch.sum(torch.log(scale), dim=[1, 2, 3])
    return torch.cat((z1, z2), dim=1), logdet


x = torch.randn(2, 4, 5, 5)
z, logdet = normal_flow(x, False)
try:
    (z.pow(2).sum() - logdet.sum()).backward()
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "inplace operation" in str(e), e
z, logdet = normal_flow(x, True)
(z.pow(2).sum() - logdet.sum()).backward()
print("CONFIRMED")
