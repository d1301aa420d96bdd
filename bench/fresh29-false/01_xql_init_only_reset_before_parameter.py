"""fresh29 false: Div99/XQL online/research/networks/common.py:55 and :57 (GS302, two findings).

`LinearEnsemble.__init__` sets `self.weight = torch.empty((E, in, out))` (a plain tensor, no grad) and calls
`self.reset_parameters()`, which runs `for w in self.weight: w.transpose_(0, 1); nn.init.kaiming_uniform_(w, ...);
w.transpose_(0, 1)` (lines 54-57) and only then wraps it: `self.weight = nn.Parameter(self.weight)` (line 58).
`reset_parameters` has no other caller in the repository (mlp.py re-initialises LinearEnsemble through
`m.weight.data[i]`). So the in-place transposes run on views of a plain tensor, before the Parameter exists, and
nothing raises; gradsight takes the Parameter made at line 58 as the state of `self.weight` when the loop runs.
Run below: the real class is built (two layers, stacked as EnsembleMLP (mlp.py:35) stacks them) and trains; only a second,
hypothetical call of `reset_parameters()` on the built layer (which the repository never makes) raises, and then
with "Output 0 of Unbind is a view and is being modified inplace" (iterating a tensor that requires grad gives
unbind's views), not the leaf error gradsight names.
"""
import math

import torch
from torch import nn


class LinearEnsemble(nn.Module):
    def __init__(self, in_features, out_features, bias=True, ensemble_size=3, device=None, dtype=None):
        factory_kwargs = {'device': device, 'dtype': dtype}
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.ensemble_size = ensemble_size
        self.weight = torch.empty((ensemble_size, in_features, out_features), **factory_kwargs)
        if bias:
            self.bias = torch.empty((ensemble_size, 1, out_features), **factory_kwargs)
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        for w in self.weight:
            w.transpose_(0, 1)                                   # line 55
            nn.init.kaiming_uniform_(w, a=math.sqrt(5))
            w.transpose_(0, 1)                                   # line 57
        self.weight = nn.Parameter(self.weight)                  # line 58
        if self.bias is not None:
            fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.weight[0].T)
            bound = 1 / math.sqrt(fan_in)
            nn.init.uniform_(self.bias, -bound, bound)
            self.bias = nn.Parameter(self.bias)

    def forward(self, input):
        if len(input.shape) == 2:
            input = input.repeat(self.ensemble_size, 1, 1)
        return torch.baddbmm(self.bias, input, self.weight)


torch.manual_seed(0)
net = nn.Sequential(LinearEnsemble(7, 16, ensemble_size=2), nn.ReLU(), LinearEnsemble(16, 1, ensemble_size=2))
assert all(isinstance(p, nn.Parameter) for p in net.parameters()) and len(list(net.parameters())) == 4
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
w0 = net[0].weight.detach().clone()
for _ in range(3):
    loss = net(torch.randn(5, 7)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
assert not torch.equal(w0, net[0].weight)
print("built through __init__ and trained 3 steps: ok; weight", tuple(net[0].weight.shape))

try:
    net[0].reset_parameters()          # never done by the repository
except RuntimeError as e:
    print("a second call on the built layer would raise:", str(e)[:80])
    assert "is a view and is being modified inplace" in str(e)
else:
    raise AssertionError("the second call did not raise")
