"""Reproduction for `kornia_mix_output_inplace_on_input`: kornia/kornia c80fc785 (Removed the inplace operation).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


def apply_non_transform(input):
    return input                          # MixAugmentationBaseV2.apply_non_transform


def apply_transform(input, lam):          # a mixup: saves input for lam's gradient path
    return input * lam + input.flip(0) * (1 - lam)


def transform_input(input, to_apply, fixed):
    in_tensor = input
    lam = torch.full((input.shape[0], 1), 0.3)
    applied = apply_transform(in_tensor, lam)
    output = apply_non_transform(in_tensor)
    if fixed:
        output = output.index_put((to_apply,), apply_non_transform(applied)[to_apply])
    else:
        output[to_apply] = apply_non_transform(applied)[to_apply]     # buggy: writes into the caller's tensor
    return output


to_apply = torch.tensor([True, False, True])
leaf = torch.randn(3, 4, requires_grad=True)
try:
    transform_input(leaf, to_apply, False)
    raise SystemExit("buggy form did not raise on a leaf input")
except RuntimeError as e:
    assert "leaf Variable that requires grad" in str(e), e
x = torch.randn(3, 4, requires_grad=True)
caller = x * 1.0                                   # a non-leaf batch the caller keeps using
kept = caller.detach().clone()
transform_input(caller, to_apply, False)
assert not torch.equal(caller.detach(), kept)      # the caller's tensor was overwritten
caller = x * 1.0
transform_input(caller, to_apply, True)
assert torch.equal(caller.detach(), kept)
transform_input(leaf, to_apply, True).sum().backward()
assert leaf.grad is not None
print("CONFIRMED")
