"""fresh15 (real): GS301 pytorch-semseg `ptsemseg/models/linknet.py:88` and MCD_DA `segmentation/models/resnet.py:39, 85`.

The real statements: a block ending in ReLU (linknet: `conv2DBatchNormRelu`'s `nn.ReLU(inplace=True)`; MCD_DA:
`out = self.relu(out)` with `nn.ReLU()`), then the residual/skip add in place (`d4 += e3`, `out += shortcut`).
ReLU saves its output for backward; `+=` bumps its version, so backward raises.
"""
import torch
import torch.nn as nn


class ConvBNRelu(nn.Module):  # ptsemseg.models.utils.conv2DBatchNormRelu
    def __init__(self, c):
        super().__init__()
        self.cbr_unit = nn.Sequential(nn.Conv2d(c, c, 1), nn.BatchNorm2d(c), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.cbr_unit(x)


def linknet_like():
    decoder4 = ConvBNRelu(4)
    e3 = torch.randn(2, 4, 5, 5, requires_grad=True)
    d4 = decoder4(torch.randn(2, 4, 5, 5))
    d4 += e3
    d4.sum().backward()


class Bottleneck(nn.Module):  # MCD_DA segmentation/models/resnet.py, shortened
    def __init__(self, c):
        super().__init__()
        self.conv3 = nn.Conv2d(c, c, 1)
        self.bn3 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU()

    def forward(self, x):
        shortcut = x
        out = self.conv3(x)
        out = self.bn3(out)
        out = self.relu(out)
        out += shortcut
        out = self.relu(out)
        return out


def mcd_like():
    Bottleneck(4)(torch.randn(2, 4, 5, 5)).sum().backward()


for f in (linknet_like, mcd_like):
    try:
        f()
        print(f.__name__, "backward ran (unexpected)")
    except RuntimeError as e:
        assert "modified by an inplace operation" in str(e), e
        print(f.__name__, "raises:", str(e)[:90])
