"""Reproduction for `drqa_tcn_reverse_numpy_cut`: facebookresearch/DrQA commit db89b09e ("fixed gradient update issue").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the bidirectional TCN flips its input and the reverse output through `x.data.cpu().numpy()` /
`torch.from_numpy`, which cuts the graph, so the reverse TCN never receives gradients (and the input gets none from
that branch); the fix flips with `torch.index_select`, which autograd tracks.
"""

import numpy as np
import torch

torch.manual_seed(0)
tcn = torch.nn.Conv1d(2, 2, 1)
reverse = torch.nn.Conv1d(2, 2, 1)


def forward(x, fixed):
    y = tcn(x)
    if fixed:
        indices = torch.LongTensor(list(reversed(range(x.shape[2]))))
        x_rev = torch.index_select(x, 2, indices)
        y2 = reverse(x_rev)
        y2_rev = torch.index_select(y2, 2, indices)
    else:
        x_rev = torch.from_numpy(np.flip(x.data.cpu().numpy(), 2).copy())
        y2 = reverse(x_rev)
        y2_rev = torch.from_numpy(np.flip(y2.data.cpu().numpy(), 2).copy())
    return torch.cat((y, y2_rev), 1)


for fixed in (False, True):
    reverse.zero_grad()
    tcn.zero_grad()
    forward(torch.randn(1, 2, 5), fixed).pow(2).sum().backward()
    if fixed:
        assert reverse.weight.grad is not None and reverse.weight.grad.abs().sum() > 0
    else:
        assert reverse.weight.grad is None        # buggy: the reverse TCN is never trained
    assert tcn.weight.grad is not None

print("CONFIRMED")
