# From xingyizhou/CenterNet src/lib/models/networks/large_hourglass.py:40 (fresh7, first try at d79ed50).
# Finding: GS301 "`ReLU(inplace=True)` (line 40) modifies `bn`, saved for backward by `BatchNorm1d` at line 44".
# Why wrong: `bn = self.bn(linear) if self.with_bn else linear`. BatchNorm saves its *input* (`linear`), not its
# output; `bn` is the same tensor as `linear` only in the `else` arm, where BatchNorm never ran. In either arm
# the in-place ReLU modifies nothing a backward needs (this program backwards both arms).
import torch
import torch.nn as nn


class fully_connected(nn.Module):
    def __init__(self, inp_dim, out_dim, with_bn=True):
        super(fully_connected, self).__init__()
        self.with_bn = with_bn

        self.linear = nn.Linear(inp_dim, out_dim)
        if self.with_bn:
            self.bn = nn.BatchNorm1d(out_dim)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        linear = self.linear(x)
        bn = self.bn(linear) if self.with_bn else linear
        relu = self.relu(bn)
        return relu


for with_bn in (True, False):
    fully_connected(4, 3, with_bn=with_bn)(torch.randn(8, 4)).sum().backward()
print("ok")
