"""Reproduction for `nowcasting_convlstm_peephole_not_registered`: Hzzone/Precipitation-Nowcasting 1e38d21a (fix convlstm bug).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvLSTMCell(nn.Module):
    def __init__(self, fixed, num_filter=2, h=4, w=4):
        super().__init__()
        self._conv = nn.Conv2d(1 + num_filter, num_filter * 4, 3, padding=1)
        if fixed:
            self.Wci = nn.Parameter(torch.zeros(1, num_filter, h, w)).to("cpu")
            self.Wcf = nn.Parameter(torch.zeros(1, num_filter, h, w)).to("cpu")
            self.Wco = nn.Parameter(torch.zeros(1, num_filter, h, w)).to("cpu")
        else:
            self.Wci = torch.zeros(1, num_filter, h, w).to("cpu")
            self.Wcf = torch.zeros(1, num_filter, h, w).to("cpu")
            self.Wco = torch.zeros(1, num_filter, h, w).to("cpu")
            self.Wci.requires_grad = True
            self.Wcf.requires_grad = True
            self.Wco.requires_grad = True

    def forward(self, x, h, c):
        i, f, tmp_c, o = torch.chunk(self._conv(torch.cat([x, h], 1)), 4, dim=1)
        i = torch.sigmoid(i + self.Wci * c)
        f = torch.sigmoid(f + self.Wcf * c)
        c = f * c + i * torch.tanh(tmp_c)
        o = torch.sigmoid(o + self.Wco * c)
        return o * torch.tanh(c), c


def train(fixed):
    model = ConvLSTMCell(fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        h, c = model(torch.randn(2, 1, 4, 4), torch.zeros(2, 2, 4, 4), torch.randn(2, 2, 4, 4))
        h.pow(2).mean().backward()
        optimizer.step()
    return model


buggy = train(False)
assert buggy.Wci.grad is not None and buggy.Wci.grad.abs().sum() > 0     # gradients reach it ...
assert buggy.Wci.abs().sum() == 0 and 'Wci' not in buggy.state_dict()   # ... but it never trains and is not saved
fixed = train(True)
assert fixed.Wci.abs().sum() > 0 and 'Wci' in fixed.state_dict()
print("CONFIRMED")
