"""Reproduction for `ibot_finetune_pos_embed_detached`: bytedance/ibot 6f6b921 (fix pos_embed detach bugs).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


class VT(torch.nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.fixed = fixed
        self.patch = torch.nn.Linear(4, 8)
        self.pos_embed = torch.nn.Parameter(torch.zeros(1, 5, 8))

    def forward(self, x):
        x = self.patch(x)
        if self.fixed:
            x = x + self.pos_embed.type_as(x).to(x.device)
        else:
            x = x + self.pos_embed.type_as(x).to(x.device).clone().detach()   # buggy
        return x.sum()


for fixed in (False, True):
    m = VT(fixed)
    m(torch.randn(2, 5, 4)).backward()
    assert (m.pos_embed.grad is not None) == fixed, (fixed, m.pos_embed.grad)
print("CONFIRMED")
