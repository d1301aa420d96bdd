"""fresh21 false: DmitryUlyanov/deep-image-prior models/unet.py:59 and :61 (GS510).

Shape: `self.more_downs = [unetDown(...) for ...]` (a plain list) is replaced two lines later by
`self.more_downs = ListModule(*self.more_downs)`, a user nn.Module whose __init__ calls `self.add_module(str(idx),
module)` for each. nn.Module.__setattr__ removes the list from __dict__ and registers the container, so every module
of the list is a registered submodule and its parameters reach `net.parameters()` and the optimizer. gradsight
reports the list assignment without seeing that the attribute is rebound to a Module holding the same modules.
ListModule as in unet.py:7-30; the UNet lines 58-64 with small blocks.
"""
import torch
import torch.nn as nn


class ListModule(nn.Module):
    def __init__(self, *args):
        super().__init__()
        idx = 0
        for module in args:
            self.add_module(str(idx), module)
            idx += 1

    def __getitem__(self, idx):
        it = iter(self._modules.values())
        for i in range(idx):
            next(it)
        return next(it)

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)


class UNetPart(nn.Module):
    def __init__(self, more_layers=2):
        super().__init__()
        self.more_layers = more_layers
        if self.more_layers > 0:
            self.more_downs = [nn.Conv2d(4, 4, 3, padding=1) for i in range(self.more_layers)]   # unet.py:59
            self.more_ups = [nn.Conv2d(8, 4, 3, padding=1) for i in range(self.more_layers)]     # unet.py:61
            self.more_downs = ListModule(*self.more_downs)
            self.more_ups = ListModule(*self.more_ups)

    def forward(self, x):
        for d in self.more_downs:
            x = d(x)
        return self.more_ups[-1](torch.cat([x, x], 1))


net = UNetPart()
names = {n for n, _ in net.named_parameters()}
assert {"more_downs.0.weight", "more_downs.1.weight", "more_ups.0.weight", "more_ups.1.weight"} <= names, names
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
before = net.more_downs[0].weight.detach().clone()
net(torch.randn(1, 4, 5, 5)).mean().backward()
opt.step()
assert not torch.equal(before, net.more_downs[0].weight)
print("OK: the list's modules are registered through ListModule and trained:", sorted(names)[:4], "...")
