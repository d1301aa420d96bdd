"""Reproduction for `dctr_linear_weight_to_device_not_param`: shenweichen/DeepCTR-Torch commit 2e42ff66 ("Dev zsx (#142)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `self.weight = nn.Parameter(torch.Tensor(n, 1)).to(device)` moves the Parameter after wrapping it; when the
device differs (cuda), `.to()` returns a copy that is a plain non-leaf tensor (grad_fn ToCopyBackward), not a
Parameter, so the module registers no `weight` parameter, the optimizer never sees it and the dense-feature weights
silently stay at their random init (and their .grad is never populated). The fix calls `.to(device)` inside
`nn.Parameter(...)`. (This CPU-only repro moves to the "meta" device to get the same copying `.to()`.)
"""

import torch
from torch import nn

device = "meta"          # any device other than the tensor's own; the project moves to cuda


class Linear(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        if fixed:
            self.weight = nn.Parameter(torch.Tensor(3, 1).to(device))
        else:
            self.weight = nn.Parameter(torch.Tensor(3, 1)).to(device)   # buggy


buggy = Linear(False)
assert not isinstance(buggy.weight, nn.Parameter) and not buggy.weight.is_leaf
assert "weight" not in dict(buggy.named_parameters())      # optimizer(model.parameters()) never updates it
fixed = Linear(True)
assert isinstance(fixed.weight, nn.Parameter) and "weight" in dict(fixed.named_parameters())

# the same on CPU with a copying .to(): the leaf that would get .grad is unreachable
w = nn.Parameter(torch.randn(3, 1)).to(torch.float64)
(w.sum()).backward()
assert w.grad is None and not w.is_leaf

print("CONFIRMED")
