"""A gated MLP block whose in-place scaling overwrites the sigmoid output that sigmoid saved for its
backward: backward raises "one of the variables needed for gradient computation has been modified by
an inplace operation" (GS301 at line 19; the safe fix rewrites it out of place)."""
import torch
import torch.nn as nn


class GatedBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.value = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        v = self.value(x)
        v *= 0.5  # fine: Linear does not save its output
        g = torch.sigmoid(self.gate(x))
        g *= 2.0  # breaks backward: sigmoid saved g
        return self.norm(x + v * g)


block = GatedBlock(16)
out = block(torch.randn(8, 16))
out.pow(2).mean().backward()
