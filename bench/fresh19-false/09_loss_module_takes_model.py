"""fresh19 (false): GS519 allenai/hidden-networks `utils/net_utils.py:134`.

    class SubnetL1RegLoss(nn.Module):
        def forward(self, model, temperature=1.0):
            l1_accum = 0.0
            for n, p in model.named_parameters():          # line 134
                if n.endswith("scores"):
                    l1_accum += (p*temperature).sigmoid().sum()
            return l1_accum

    regloss = l1reg(model) * 1e-8                          # trainers/ss.py

The loss module's `forward` takes the network, not a tensor: `model` is an `nn.Module`, which has
`named_parameters()`. (Its one user, `trainers/ss.py`, builds it as `SubnetL1RegLoss(temperature=1.0)`, which the
`__init__` without parameters rejects with a TypeError: a different bug, at a different line, that no rule
claims.) Runs cleanly.
"""
import torch
import torch.nn as nn


class SubnetL1RegLoss(nn.Module):
    def forward(self, model, temperature=1.0):
        l1_accum = 0.0
        for n, p in model.named_parameters():
            if n.endswith("scores"):
                l1_accum += (p * temperature).sigmoid().sum()
        return l1_accum


class SubnetLinear(nn.Linear):
    def __init__(self, *a):
        super().__init__(*a)
        self.scores = nn.Parameter(torch.randn_like(self.weight))


model = nn.Sequential(SubnetLinear(3, 4), nn.ReLU(), SubnetLinear(4, 1))
regloss = SubnetL1RegLoss()(model) * 1e-8
regloss.backward()
print("regloss", regloss.item(), "scores grad", model[0].scores.grad.abs().sum().item())
