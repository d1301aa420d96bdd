"""fresh34 false: GS519 arthurdouillard/dytox continual/utils.py:308 and GS209 continual/utils.py:309.

"`m` is a tensor, and tensors have no `parameters()`: this raises AttributeError" (308) and "Changing
`requires_grad` of a computed (non-leaf) tensor raises" (309). `freeze_parameters` (verbatim below) sends an
`nn.Parameter` to its first arm (`if isinstance(m, nn.Parameter): m.requires_grad = ...`), so the `else:` arm
only ever sees modules: `self`, `self.head`, `self.blocks`, `self.patch_embed`, `self.norm`, `self.backbone`,
`self.sabs`/`self.tabs` (ModuleList slices), `self.head[:-1]`, and `self.task_tokens[:-1]` (a slice of an
nn.ParameterList, itself a ParameterList). The parameters it yields are leaves. The program calls it with every
kind of argument its callers pass (convit.py:614-621, dytox.py:188-219, cnn/abstract.py:26-38).
"""
import torch
from torch import nn


def freeze_parameters(m, requires_grad=False):
    if m is None:
        return

    if isinstance(m, nn.Parameter):
        m.requires_grad = requires_grad
    else:
        for p in m.parameters():
            p.requires_grad = requires_grad


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos_embed = nn.Parameter(torch.zeros(1, 5, 4))          # convit/dytox: transformer.pos_embed
        self.task_tokens = nn.ParameterList([nn.Parameter(torch.zeros(1, 1, 4)) for _ in range(3)])
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(4)])
        self.sabs = self.blocks[:2]                                   # dytox: transformer.blocks[:local_up_to_layer]
        self.head = nn.ModuleList([nn.Linear(4, 2) for _ in range(3)])
        self.norm = nn.LayerNorm(4)
        self.head_div = None


m = Tiny()
for arg in (m, m.pos_embed, m.task_tokens[:-1], m.task_tokens, m.blocks, m.sabs, m.head[:-1], m.head, m.norm,
            m.head_div):
    freeze_parameters(arg)                       # requires_grad=False
    freeze_parameters(arg, requires_grad=True)
    freeze_parameters(arg, requires_grad=False)
assert type(m.task_tokens[:-1]) is nn.ParameterList
assert all(p.is_leaf and not p.requires_grad for p in m.parameters())
print("false: every argument the callers pass runs; `m` in the else arm is always a module, its parameters leaves")
