"""GS510 false: JCruan519/VM-UNet models/vmunet/vmamba.py:293.

`SS2D.__init__` (VMamba's) builds `self.x_proj = (nn.Linear(...), nn.Linear(...), nn.Linear(...), nn.Linear(...))`,
a plain tuple, only to initialise `self.x_proj_weight = nn.Parameter(torch.stack([t.weight for t in self.x_proj],
dim=0))`, and then runs `del self.x_proj`. The four Linear modules never outlive `__init__`; their initial weights
live on in the registered, trained parameter `x_proj_weight`, which forward uses (`torch.einsum(..., xs,
self.x_proj_weight)`). Nothing the model needs is left untrained (the same is done for `dt_projs`).
"""
import math

import torch
import torch.nn as nn


class SS2D(nn.Module):  # __init__ as in the repository (the dt / A / D parts cut), forward reduced to the projection
    def __init__(self, d_model, d_state=16, expand=2, dt_rank="auto", bias=False, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.d_model = d_model
        self.d_state = d_state
        self.d_inner = int(expand * self.d_model)
        self.dt_rank = math.ceil(self.d_model / 16) if dt_rank == "auto" else dt_rank
        self.in_proj = nn.Linear(self.d_model, self.d_inner, bias=bias, **factory_kwargs)
        self.x_proj = (
            nn.Linear(self.d_inner, (self.dt_rank + self.d_state * 2), bias=False, **factory_kwargs),
            nn.Linear(self.d_inner, (self.dt_rank + self.d_state * 2), bias=False, **factory_kwargs),
            nn.Linear(self.d_inner, (self.dt_rank + self.d_state * 2), bias=False, **factory_kwargs),
            nn.Linear(self.d_inner, (self.dt_rank + self.d_state * 2), bias=False, **factory_kwargs),
        )
        self.x_proj_weight = nn.Parameter(torch.stack([t.weight for t in self.x_proj], dim=0))  # (K=4, N, inner)
        del self.x_proj
        self.out_proj = nn.Linear(4 * (self.dt_rank + self.d_state * 2), self.d_model, bias=bias, **factory_kwargs)

    def forward(self, x):
        xs = self.in_proj(x)                                          # (B, L, D)
        xs = xs.unsqueeze(1).expand(-1, 4, -1, -1).transpose(2, 3)    # (B, K=4, D, L)
        x_dbl = torch.einsum("b k d l, k c d -> b k c l", xs, self.x_proj_weight)
        return self.out_proj(x_dbl.permute(0, 3, 1, 2).flatten(2))


torch.manual_seed(0)
m = SS2D(d_model=8)
assert not hasattr(m, "x_proj")  # the tuple is gone after __init__
names = dict(m.named_parameters())
assert "x_proj_weight" in names and names["x_proj_weight"].shape == (4, 1 + 32, 16)
opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
before = m.x_proj_weight.detach().clone()
for _ in range(3):
    opt.zero_grad()
    m(torch.randn(2, 5, 8)).pow(2).mean().backward()
    opt.step()
assert not torch.equal(before, m.x_proj_weight)  # the projection the tuple initialised is trained
print("ok: the stacked projection is registered and trained; the tuple no longer exists")
