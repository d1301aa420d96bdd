"""fresh19 (harmless): GS516 vgsatorras/egnn `models/ae.py:92, 122`.

`self.b = nn.Parameter(torch.ones(1)).to(device)` drops the Parameter when `.to()` moves it (a plain tensor,
missing from `parameters()`), but `main_ae.py` builds `device = torch.device("cuda" if args.cuda else "cpu")` with
`args.cuda = not args.no_cuda and ...` and `--no-cuda` is `store_true` with `default=True`: the device is always the
CPU, where `.to()` returns the Parameter itself. Runs: on the CPU the parameter stays registered; moved to another
dtype (standing in for a GPU move) it is dropped.
"""
import torch
import torch.nn as nn


class Dec(nn.Module):
    def __init__(self, device, dtype=None):
        super().__init__()
        self.w = nn.Parameter(-0.1 * torch.ones(1)).to(device, dtype)
        self.b = nn.Parameter(torch.ones(1)).to(device, dtype)


names = [n for n, _ in Dec(torch.device("cpu")).named_parameters()]
assert names == ["w", "b"], names
assert [n for n, _ in Dec(torch.device("cpu"), torch.float64).named_parameters()] == []
print("on the CPU both stay registered:", names)
