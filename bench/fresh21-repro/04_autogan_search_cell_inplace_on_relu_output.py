"""fresh21 real: TAMU-VITA/AutoGAN models_search/building_blocks_search.py:163, 166, 178, 180 (GS301).

The repository's PostGenBlock and Cell (building_blocks_search.py:63-182), unchanged. With a `post` conv cell
(conv_id 0, which the controller samples), `h` is `nn.ReLU()(...)`'s output (PostGenBlock.forward ends with it) and
`h += skip_in_op(...)` (163 for bilinear/nearest up-sampling, 166 for deconv) writes it in place; `final_out` is again
a PostGenBlock output and `final_out += self.c_sc(...)` (178/180) writes it. ReLU's backward needs its output, so the
generator loss backward of `train_shared` (functions.py:84) raises. Each of the four lines is run on its own.
"""
import torch
from torch import nn
import torch.nn.functional as F

CONV_TYPE = {0: 'post', 1: 'pre'}
NORM_TYPE = {0: None, 1: 'bn', 2: 'in'}
UP_TYPE = {0: 'bilinear', 1: 'nearest', 2: 'deconv'}
SHORT_CUT_TYPE = {0: False, 1: True}


def decimal2binary(n):
    return bin(n).replace("0b", "")


class PostGenBlock(nn.Module):
    def __init__(self, in_channels, out_channels, up_block, ksize=3):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, in_channels, kernel_size=2, stride=2)
        self.conv = nn.Conv2d(in_channels, out_channels, ksize, padding=ksize // 2)
        self.bn = nn.BatchNorm2d(out_channels)
        self.inn = nn.InstanceNorm2d(out_channels)
        self.up_block = up_block

    def set_arch(self, up_id, norm_id):
        self.up_type = UP_TYPE[up_id]
        self.norm_type = NORM_TYPE[norm_id]

    def forward(self, x):
        if self.up_block:
            if self.up_type == 'deconv':
                h = self.deconv(x)
            else:
                h = F.interpolate(x, scale_factor=2, mode=self.up_type)
        else:
            h = x
        h = self.conv(h)
        if self.norm_type:
            h = self.bn(h) if self.norm_type == 'bn' else self.inn(h)
        out = nn.ReLU()(h)
        return out


class Cell(nn.Module):
    def __init__(self, in_channels, out_channels, num_skip_in, ksize=3):
        super().__init__()
        self.post_conv1 = PostGenBlock(in_channels, out_channels, ksize=ksize, up_block=True)
        self.post_conv2 = PostGenBlock(out_channels, out_channels, ksize=ksize, up_block=False)
        self.deconv_sc = nn.ConvTranspose2d(in_channels, in_channels, kernel_size=2, stride=2)
        self.c_sc = nn.Conv2d(in_channels, out_channels, kernel_size=1)
        self.skip_deconvx2 = nn.ConvTranspose2d(in_channels, out_channels, kernel_size=2, stride=2)
        self.num_skip_in = num_skip_in
        if num_skip_in:
            self.skip_in_ops = nn.ModuleList([nn.Conv2d(in_channels, out_channels, kernel_size=1)
                                              for _ in range(num_skip_in)])

    def set_arch(self, conv_id, norm_id, up_id, short_cut_id, skip_ins):
        self.post_conv1.set_arch(up_id, norm_id)
        self.post_conv2.set_arch(up_id, norm_id)
        if self.num_skip_in:
            self.skip_ins = [0 for _ in range(self.num_skip_in)]
            for skip_idx, skip_in in enumerate(decimal2binary(skip_ins)[::-1]):
                self.skip_ins[-(skip_idx + 1)] = int(skip_in)
        self.conv_type = CONV_TYPE[conv_id]
        self.up_type = UP_TYPE[up_id]
        self.short_cut = SHORT_CUT_TYPE[short_cut_id]

    def forward(self, x, skip_ft=None):
        residual = x
        h = self.post_conv1(residual)
        _, _, ht, wt = h.size()
        h_skip_out = h
        if self.num_skip_in:
            for skip_flag, ft, skip_in_op in zip(self.skip_ins, skip_ft, self.skip_in_ops):
                if skip_flag:
                    if self.up_type != 'deconv':
                        h += skip_in_op(F.interpolate(ft, size=(ht, wt), mode=self.up_type))   # line 163
                    else:
                        scale = wt // ft.size()[-1]
                        h += skip_in_op(getattr(self, f'skip_deconvx{scale}')(ft))            # line 166
        final_out = self.post_conv2(h)
        if self.short_cut:
            if self.up_type != 'deconv':
                final_out += self.c_sc(F.interpolate(x, scale_factor=2, mode=self.up_type))  # line 178
            else:
                final_out += self.c_sc(self.deconv_sc(x))                                     # line 180
        return h_skip_out, final_out


torch.manual_seed(0)
cases = {163: dict(up_id=0, short_cut_id=0, skip_ins=1), 166: dict(up_id=2, short_cut_id=0, skip_ins=1),
         178: dict(up_id=1, short_cut_id=1, skip_ins=0), 180: dict(up_id=2, short_cut_id=1, skip_ins=0)}
for line, arch in cases.items():
    cell = Cell(4, 4, num_skip_in=1)
    cell.set_arch(conv_id=0, norm_id=0, **arch)
    x = torch.randn(2, 4, 4, 4)
    skip_ft = [torch.randn(2, 4, 4, 4, requires_grad=True)]
    _, out = cell(x, skip_ft)
    try:
        out.mean().backward()
        raise SystemExit(f"line {line}: no error: unexpected")
    except RuntimeError as e:
        assert "modified by an inplace operation" in str(e), e
        print(f"line {line}: backward raised: {str(e)[:90]}")
cell = Cell(4, 4, num_skip_in=1)
cell.set_arch(conv_id=0, norm_id=0, up_id=0, short_cut_id=0, skip_ins=0)
cell(torch.randn(2, 4, 4, 4), [torch.randn(2, 4, 4, 4)])[1].mean().backward()
print("control (no skip, no shortcut): backward runs")
print("OK: each of the four in-place adds on a ReLU output makes the backward raise")
