"""Reproduction for `art_od_requires_grad_non_leaf_input`: Trusted-AI/adversarial-robustness-toolbox commit 9cbb5996 ("fix pytorch object detector loss gradient bug").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `_preprocess_and_convert_inputs(no_grad=False)` takes `x` as is when it is already a tensor and sets
`x_tensor.requires_grad = True`; when `x` is the output of a differentiable computation (e.g. AdversarialPatchPyTorch's
`compute_loss(x=patched_input)`, built from the trainable patch) it is a non-leaf and the assignment raises "you can only
change requires_grad flags of leaf variables"; the fix sets the flag only on leaves and calls `retain_grad()` otherwise.
"""

import torch

patch = torch.zeros(1, 3, 4, 4, requires_grad=True)     # the attack's trainable patch
image = torch.rand(2, 3, 4, 4)
mask = torch.zeros(1, 1, 4, 4)
mask[..., 1:3, 1:3] = 1
model = torch.nn.Conv2d(3, 1, 3)
norm_factor = 1.0


def get_loss(fixed):
    patched_input = image * (1 - mask) + patch * mask   # compute_loss(x=patched_input, ...)
    x_tensor = patched_input                             # cast_inputs_to_pt: a tensor is passed through
    x_tensor = x_tensor / norm_factor
    if fixed:
        if x_tensor.is_leaf:
            x_tensor.requires_grad = True
        else:
            x_tensor.retain_grad()
    else:
        x_tensor.requires_grad = True                    # buggy
    return model(x_tensor).sum(), x_tensor


try:
    get_loss(fixed=False)
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "leaf variables" in str(e), e
loss, x_grad = get_loss(fixed=True)
loss.backward()
assert x_grad.grad is not None and patch.grad is not None

print("CONFIRMED")
