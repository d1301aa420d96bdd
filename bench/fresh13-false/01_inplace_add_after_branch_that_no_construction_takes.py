"""A residual `x += skip` after a submodule whose last op saves its output only when a constructor flag is False;
no construction in the program passes that flag, so the output is a BatchNorm's (not saved) and backward runs.

Shape of bubbliiiing/deeplabv3-plus-pytorch nets/xception.py:72 (`Block.forward`; `SeparableConv2d(...,
activate_first=activate_first)` ends in `relu2` only when `activate_first` is False, and every `Block(...)` keeps
the default True).
"""
import torch
import torch.nn as nn


class SeparableConv2d(nn.Module):
    def __init__(self, cin, cout, activate_first=True):
        super().__init__()
        self.relu0 = nn.ReLU(inplace=False)
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.relu2 = nn.ReLU(inplace=True)
        self.activate_first = activate_first

    def forward(self, x):
        if self.activate_first:
            x = self.relu0(x)
        x = self.conv(x)
        x = self.bn(x)
        if not self.activate_first:
            x = self.relu2(x)
        return x


class Block(nn.Module):
    def __init__(self, cin, cout, activate_first=True):
        super().__init__()
        self.skip = nn.Conv2d(cin, cout, 1, bias=False)
        self.sepconv1 = SeparableConv2d(cin, cout, activate_first=activate_first)
        self.sepconv2 = SeparableConv2d(cout, cout, activate_first=activate_first)

    def forward(self, inp):
        skip = self.skip(inp)
        x = self.sepconv1(inp)
        x = self.sepconv2(x)
        x += skip
        return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = Block(3, 8)
        self.block2 = Block(8, 8)

    def forward(self, x):
        return self.block2(self.block1(x))


net = Net()
net(torch.randn(2, 3, 8, 8)).sum().backward()
print("backward ran; grad:", net.block1.skip.weight.grad.abs().sum().item() > 0)
