"""Reproduction for `gradcam_full_backward_hook_inplace`: jacobgil/pytorch-grad-cam commit a9511f6 ("Use forward hook instead of backward hook to avoid the incompatibility between backward hook and inplace operation.").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: gradients of the target layer were captured with `target_layer.register_full_backward_hook`;
when the layer's output is next modified in place (e.g. `ReLU(inplace=True)`), the CAM's backward
raises "Output 0 of BackwardHookFunction is a view and is being modified inplace" (pytorch#61519).
The fix registers a forward hook that calls `output.register_hook(...)` on the output tensor instead.
"""

import torch


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(inplace=True), torch.nn.Linear(8, 3))


x = torch.randn(2, 4)

# buggy: full backward hook on the target layer
model = make_model()
grads = []
model[0].register_full_backward_hook(lambda module, grad_input, grad_output: grads.append(grad_output[0]))
try:
    model(x)[:, 0].sum().backward()
    raise AssertionError("expected backward to raise")
except RuntimeError as exc:
    assert "is being modified inplace" in str(exc), exc

# fixed: a tensor hook registered from a forward hook
model = make_model()
grads = []


def save_gradient(module, input, output):
    output.register_hook(grads.append)


model[0].register_forward_hook(save_gradient)
model(x)[:, 0].sum().backward()
assert len(grads) == 1 and grads[0].shape == (2, 8)

print("CONFIRMED")
