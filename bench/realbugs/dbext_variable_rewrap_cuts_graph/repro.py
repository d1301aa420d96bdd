"""Reproduction for `dbext_variable_rewrap_cuts_graph`: d8ahazard/sd_dreambooth_extension commit bae6179 ("Fix autograd junk").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `model_pred = torch.autograd.Variable(model_pred, requires_grad=True)` re-wraps the U-Net prediction as a
new leaf that shares its data but has no grad_fn, so the split instance/prior losses backpropagate only into that
leaf and the U-Net/text encoder get no gradient (silently, no error); the fix removes the re-wrapping.
"""

import torch

torch.manual_seed(0)
unet = torch.nn.Linear(4, 4)


def step(fixed):
    unet.zero_grad()
    noise_pred = unet(torch.randn(2, 4))
    target = torch.randn(2, 4)
    chunks = torch.split(noise_pred, 1, dim=0)
    model_pred = torch.stack(list(chunks), dim=0)
    tgt = torch.stack(list(torch.split(target, 1, dim=0)), dim=0)
    if not fixed:
        model_pred = torch.autograd.Variable(model_pred, requires_grad=True)   # buggy
        tgt = torch.autograd.Variable(tgt, requires_grad=False)
    loss = torch.nn.functional.mse_loss(model_pred.float(), tgt.float(), reduction="mean")
    loss.backward()                                                           # no error either way
    return unet.weight.grad


assert step(False) is None                     # the U-Net receives no gradient at all
g = step(True)
assert g is not None and g.abs().sum() > 0
print("CONFIRMED")
