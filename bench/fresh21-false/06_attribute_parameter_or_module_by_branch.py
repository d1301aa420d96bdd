"""fresh21 false: santi-pdp/segan_pytorch segan/models/generator.py:42 (GS512).

Shape: an attribute assigned a Parameter on one branch and a module on another (`self.skip_k =
nn.Parameter(alpha_.view(1, -1, 1))` for 'alpha'/'constant', `self.skip_k = nn.Conv1d(...)` for 'conv'); the write
`self.skip_k.requires_grad = False` sits in the 'constant' branch right after the Parameter assignment, so it sets a
Parameter's flag, which freezes it. gradsight treats `self.skip_k` as a module there. GSkip.__init__/forward as in
generator.py:18-78.
"""
import torch
import torch.nn as nn


class GSkip(nn.Module):
    def __init__(self, skip_type, size, skip_init, skip_dropout=0, merge_mode='sum', kwidth=11, bias=True):
        super().__init__()
        self.merge_mode = merge_mode
        if skip_type == 'alpha' or skip_type == 'constant':
            if skip_init == 'zero':
                alpha_ = torch.zeros(size)
            elif skip_init == 'randn':
                alpha_ = torch.randn(size)
            elif skip_init == 'one':
                alpha_ = torch.ones(size)
            else:
                raise TypeError('Unrecognized alpha init scheme: ', skip_init)
            if skip_type == 'alpha':
                self.skip_k = nn.Parameter(alpha_.view(1, -1, 1))
            else:
                self.skip_k = nn.Parameter(alpha_.view(1, -1, 1))
                self.skip_k.requires_grad = False                      # generator.py:42
        elif skip_type == 'conv':
            pad = kwidth // 2 if kwidth > 1 else 0
            self.skip_k = nn.Conv1d(size, size, kwidth, stride=1, padding=pad, bias=bias)
        self.skip_type = skip_type

    def forward(self, hj, hi):
        if self.skip_type == 'conv':
            sk_h = self.skip_k(hj)
        else:
            sk_h = self.skip_k.repeat(hj.size(0), 1, hj.size(2)) * hj
        return sk_h + hi


g = GSkip('constant', 8, 'one')
assert isinstance(g.skip_k, nn.Parameter) and not g.skip_k.requires_grad
hj = torch.randn(2, 8, 5, requires_grad=True)
g(hj, torch.randn(2, 8, 5)).sum().backward()
assert g.skip_k.grad is None and hj.grad is not None
print("OK: the 'constant' skip's Parameter is frozen by `.requires_grad = False` (no gradient after backward)")
