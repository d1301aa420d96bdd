"""Reproduction for `catalyst_resnet_encoder_freeze_noop`: catalyst-team/catalyst commit 78f775f0b ("Fix freeze").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: with `frozen=True`, `for param in modules: param.requires_grad = False` sets a plain attribute on each
child *module*, so no parameter is frozen and the "frozen" encoder keeps training; the fix iterates `module.parameters()`.
"""

import torch.nn as nn


def build(fixed):
    modules = list(nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3)).children())
    if fixed:
        for module in modules:
            for param in module.parameters():
                param.requires_grad = False
    else:
        for param in modules:
            param.requires_grad = False
    return nn.Sequential(*modules)


assert all(p.requires_grad for p in build(False).parameters())       # buggy: nothing is frozen
assert not any(p.requires_grad for p in build(True).parameters())    # fixed
print("CONFIRMED")
