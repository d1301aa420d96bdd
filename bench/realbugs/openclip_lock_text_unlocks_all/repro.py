"""Reproduction for `openclip_lock_text_unlocks_all`: mlfoundations/open_clip commit 38bcad6e92 ("bugfix; properly freeze layernorm").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `lock_text_transformer` freezes every parameter and then calls `_unlock(groups[-unlocked_groups:])`;
with the default `unlocked_groups=0` the slice `groups[-0:]` is the whole list, so every parameter of the text
tower is set back to `requires_grad = True` and the "locked" tower is trained (and `freeze_layer_norm` is
ignored); the fix unlocks only when `unlocked_groups != 0` and keeps LayerNorm frozen on request.
"""

from collections.abc import Sequence

import torch
from torch import nn


class Text(nn.Module):
    def __init__(self):
        super().__init__()
        self.token_embedding = nn.Embedding(10, 4)
        self.positional_embedding = nn.Parameter(torch.zeros(3, 4))
        self.resblocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.ln_final = nn.LayerNorm(4)
        self.text_projection = nn.Parameter(torch.zeros(4, 4))


def _unlock(x):
    if isinstance(x, Sequence):
        for g in x:
            _unlock(g)
    elif isinstance(x, nn.Parameter):
        x.requires_grad = True
    else:
        for p in x.parameters():
            p.requires_grad = True


def lock(t, unlocked_groups=0, fixed=False):
    for p in t.parameters():
        p.requires_grad = False
    groups = [
        [t.token_embedding, t.positional_embedding],
        *t.resblocks[:-1],
        [t.resblocks[-1], t.ln_final],
        t.text_projection,
    ]
    if fixed and unlocked_groups == 0:                   # the fix: nothing to unlock
        return
    _unlock(groups[-unlocked_groups:])                   # buggy with 0: groups[-0:] is every group


t = Text()
lock(t, unlocked_groups=0)
assert all(p.requires_grad for p in t.parameters())      # buggy: the "locked" tower is fully trainable

t = Text()
lock(t, unlocked_groups=0, fixed=True)
assert not any(p.requires_grad for p in t.parameters())

t = Text()
lock(t, unlocked_groups=1, fixed=True)                   # a non-zero count still unlocks only the last group
assert [n for n, p in t.named_parameters() if p.requires_grad] == ["text_projection"]

print("CONFIRMED")
