"""fresh33 false, minimised shape (base engine reports GS504): the same with `.to(dev)`; `Module.to` also returns self."""
import torch
from torch import nn

class M(nn.Module):
    def __init__(self, dev):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        self.enc = self.enc.to("cpu")

m = M("cpu")
assert {id(p) for g in m.optimizer.param_groups for p in g["params"]} == {id(p) for p in m.parameters()}
print("OK: the optimizer holds the rebound module's parameters")
