"""fresh30 real: wenwenyu/MASTER-pytorch model/backbone.py:63 (GS301).

`BasicBlock.forward` runs `out = self.context_block(out)` when `use_gcb`, then `out += residual`. With
`fusion_type='channel_concat'` (both shipped configs, configs/config.json and config_lmdb.json, with gcb on in
layers 2-4) `MultiAspectGCAttention.forward` returns `nn.functional.relu(out)`, whose backward saves its result; the
in-place add (and the in-place `self.relu` after it) bumps that result's version, so the first training backward
raises. The statements below are the repository's, cut to the channel_concat path.
"""
import torch
from torch import nn

torch.manual_seed(0)


class MultiAspectGCAttention(nn.Module):          # model/context_block.py, 'att' pooling, headers=1
    def __init__(self, inplanes, ratio, fusion_type):
        super().__init__()
        self.inplanes, self.planes, self.fusion_type = inplanes, int(inplanes * ratio), fusion_type
        self.conv_mask = nn.Conv2d(inplanes, 1, kernel_size=1)
        self.softmax = nn.Softmax(dim=2)
        conv = lambda: nn.Sequential(nn.Conv2d(self.inplanes, self.planes, kernel_size=1),
                                     nn.LayerNorm([self.planes, 1, 1]), nn.ReLU(inplace=True),
                                     nn.Conv2d(self.planes, self.inplanes, kernel_size=1))
        if fusion_type == 'channel_add':
            self.channel_add_conv = conv()
        else:
            self.channel_concat_conv = conv()
            self.cat_conv = nn.Conv2d(2 * self.inplanes, self.inplanes, kernel_size=1)

    def spatial_pool(self, x):
        batch, channel, height, width = x.size()
        input_x = x.view(batch, channel, height * width).unsqueeze(1)
        context_mask = self.softmax(self.conv_mask(x).view(batch, 1, height * width)).unsqueeze(-1)
        return torch.matmul(input_x, context_mask).view(batch, channel, 1, 1)

    def forward(self, x):
        context = self.spatial_pool(x)
        out = x
        if self.fusion_type == 'channel_add':
            out = out + self.channel_add_conv(context)
        else:
            channel_concat_term = self.channel_concat_conv(context)
            N, C2, H, W = out.shape
            out = torch.cat([out, channel_concat_term.expand(-1, -1, H, W)], dim=1)
            out = self.cat_conv(out)
            out = nn.functional.layer_norm(out, [self.inplanes, H, W])
            out = nn.functional.relu(out)                       # context_block.py:124, saves its result
        return out


class BasicBlock(nn.Module):                      # model/backbone.py:22-66
    def __init__(self, planes, fusion_type):
        super().__init__()
        self.conv1 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes, momentum=0.9)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes, momentum=0.9)
        self.context_block = MultiAspectGCAttention(planes, 0.0625, fusion_type)

    def forward(self, x, fixed=False):
        residual = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = self.context_block(out)                           # use_gcb
        if fixed:
            out = out + residual
        else:
            out += residual                                     # backbone.py:63
        out = self.relu(out)
        return out


x = torch.randn(2, 32, 6, 10)
block = BasicBlock(32, 'channel_concat')                        # the shipped configs' fusion_type
try:
    block(x).sum().backward()
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e) and "output 0 of Relu" in str(e), e
    print("channel_concat (shipped config): backward raises:", str(e)[:120])
else:
    raise AssertionError("expected the in-place add to break backward")

block(x, fixed=True).sum().backward()                           # `out = out + residual` trains
assert block.conv1.weight.grad is not None
print("channel_concat with `out = out + residual`: backward runs")

BasicBlock(32, 'channel_add')(x).sum().backward()              # the other fusion types end in an add
print("channel_add: backward runs (the context block's output is an add, which saves nothing)")
