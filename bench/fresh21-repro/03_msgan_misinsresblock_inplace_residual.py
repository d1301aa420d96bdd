"""fresh21 real: HelenMao/MSGAN DRIT-Mode-Seeking/networks.py:589 (GS301).

The repository's MisINSResBlock (networks.py:550-590): `out = self.blk2(...)` ends in `nn.ReLU(inplace=False)`, whose
backward needs its output, and `out += residual` then writes that output in place. The generator `G` (used when
training with `--concat 0`, the feature-wise transform option of options.py) chains four of these blocks per domain,
so the generator's backward raises. With the default `--concat 1` (`G_concat`) the block is not used.
"""
import torch
import torch.nn as nn


class MisINSResBlock(nn.Module):
    def conv3x3(self, dim_in, dim_out, stride=1):
        return nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(dim_in, dim_out, kernel_size=3, stride=stride))

    def conv1x1(self, dim_in, dim_out):
        return nn.Conv2d(dim_in, dim_out, kernel_size=1, stride=1, padding=0)

    def __init__(self, dim, dim_extra, stride=1, dropout=0.0):
        super().__init__()
        self.conv1 = nn.Sequential(self.conv3x3(dim, dim, stride), nn.InstanceNorm2d(dim))
        self.conv2 = nn.Sequential(self.conv3x3(dim, dim, stride), nn.InstanceNorm2d(dim))
        self.blk1 = nn.Sequential(self.conv1x1(dim + dim_extra, dim + dim_extra), nn.ReLU(inplace=False),
                                  self.conv1x1(dim + dim_extra, dim), nn.ReLU(inplace=False))
        self.blk2 = nn.Sequential(self.conv1x1(dim + dim_extra, dim + dim_extra), nn.ReLU(inplace=False),
                                  self.conv1x1(dim + dim_extra, dim), nn.ReLU(inplace=False))
        self.model = nn.Sequential()

    def forward(self, x, z):
        residual = x
        z_expand = z.view(z.size(0), z.size(1), 1, 1).expand(z.size(0), z.size(1), x.size(2), x.size(3))
        o1 = self.conv1(x)
        o2 = self.blk1(torch.cat([o1, z_expand], dim=1))
        o3 = self.conv2(o2)
        out = self.blk2(torch.cat([o3, z_expand], dim=1))
        out += residual
        return out


torch.manual_seed(0)
blocks = [MisINSResBlock(8, 8) for _ in range(4)]
x = torch.randn(2, 8, 6, 6, requires_grad=True)
zs = [torch.randn(2, 8, requires_grad=True) for _ in range(4)]
out = x
for b, z in zip(blocks, zs):
    out = b(out, z)
try:
    out.mean().backward()
    raise SystemExit("no error: unexpected")
except RuntimeError as e:
    print("backward raised:", str(e)[:110])
    assert "modified by an inplace operation" in str(e)
print("OK: `out += residual` on the ReLU output makes the generator's backward raise")
