"""fresh23 real: HsinYingLee/DRIT src/networks.py:589 (GS301).

`MisINSResBlock.forward` ends with `out = self.blk2(torch.cat([o3, z_expand], dim=1))` -- blk2 ends with
`nn.ReLU(inplace=False)`, whose backward needs its own output -- then `out += residual` (line 589) changes that
output in place. The generator `G` (used with `--concat 0`, options.py: "set 0 for using feature-wise transform")
stacks eight of these blocks (decA1-4, decB1-4), so any backward through it raises. Run below with the block as
written.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class MisINSResBlock(nn.Module):                           # networks.py:550-590
    def conv3x3(self, dim_in, dim_out, stride=1):
        return nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(dim_in, dim_out, kernel_size=3, stride=stride))

    def conv1x1(self, dim_in, dim_out):
        return nn.Conv2d(dim_in, dim_out, kernel_size=1, stride=1, padding=0)

    def __init__(self, dim, dim_extra, stride=1):
        super().__init__()
        self.conv1 = nn.Sequential(self.conv3x3(dim, dim, stride), nn.InstanceNorm2d(dim))
        self.conv2 = nn.Sequential(self.conv3x3(dim, dim, stride), nn.InstanceNorm2d(dim))
        self.blk1 = nn.Sequential(self.conv1x1(dim + dim_extra, dim + dim_extra), nn.ReLU(inplace=False),
                                  self.conv1x1(dim + dim_extra, dim), nn.ReLU(inplace=False))
        self.blk2 = nn.Sequential(self.conv1x1(dim + dim_extra, dim + dim_extra), nn.ReLU(inplace=False),
                                  self.conv1x1(dim + dim_extra, dim), nn.ReLU(inplace=False))

    def forward(self, x, z):
        residual = x
        z_expand = z.view(z.size(0), z.size(1), 1, 1).expand(z.size(0), z.size(1), x.size(2), x.size(3))
        o1 = self.conv1(x)
        o2 = self.blk1(torch.cat([o1, z_expand], dim=1))
        o3 = self.conv2(o2)
        out = self.blk2(torch.cat([o3, z_expand], dim=1))
        out += residual                                     # line 589
        return out


blk = MisINSResBlock(8, 4)
x, z = torch.randn(2, 8, 6, 6, requires_grad=True), torch.randn(2, 4)
try:
    blk(x, z).mean().backward()
    raise SystemExit("expected the in-place modification error")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
    print("backward through MisINSResBlock:", str(e)[:90], "...")

# contrast: `out = out + residual` works
class Fixed(MisINSResBlock):
    def forward(self, x, z):
        z_expand = z.view(z.size(0), z.size(1), 1, 1).expand(z.size(0), z.size(1), x.size(2), x.size(3))
        o3 = self.conv2(self.blk1(torch.cat([self.conv1(x), z_expand], dim=1)))
        return self.blk2(torch.cat([o3, z_expand], dim=1)) + x
Fixed(8, 4)(x, z).mean().backward()
print("contrast, out = out + residual: backward ran")
