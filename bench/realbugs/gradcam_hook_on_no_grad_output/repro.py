"""Reproduction for `gradcam_hook_on_no_grad_output`: jacobgil/pytorch-grad-cam commit a6d8b8f ("Fix bug").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the parent commit moved gradient capture into a forward hook that calls
`output.register_hook(_store_grad)` on the target layer's output; ScoreCAM and AblationCAM run the
hooked model inside `torch.no_grad()`, where the output does not require grad, so register_hook
raises "cannot register a hook on a tensor that doesn't require gradient". The fix returns early
when `not output.requires_grad`.
"""

import torch

model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
gradients = []


def make_save_gradient(fixed):
    def save_gradient(module, input, output):
        if fixed and not output.requires_grad:          # the fix
            return
        output.register_hook(lambda grad: gradients.append(grad))
    return save_gradient


handle = model[0].register_forward_hook(make_save_gradient(fixed=False))
model(torch.randn(2, 4)).sum().backward()               # the grad-mode CAM pass works
assert len(gradients) == 1
try:
    with torch.no_grad():                               # ScoreCAM's scoring passes
        model(torch.randn(2, 4))
    raise AssertionError("expected register_hook to raise")
except RuntimeError as exc:
    assert "cannot register a hook on a tensor that doesn't require gradient" in str(exc), exc
handle.remove()

model[0].register_forward_hook(make_save_gradient(fixed=True))
with torch.no_grad():
    model(torch.randn(2, 4))

print("CONFIRMED")
