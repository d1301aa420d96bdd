"""Reproduction for `torchcam_full_backward_hook_inplace_relu`: frgfm/torch-cam commit 8a39f07 ("fix: Fixed grad storage for architectures with inplace ops").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: Grad-CAM registered `register_full_backward_hook` on the target layer; when the next layer is an in-place
op (e.g. ReLU(inplace=True) after a conv), the hooked module's output is a view produced by
BackwardHookFunction and modifying it in place raises during the forward; the fix uses a forward hook that
registers a tensor hook (`output.register_hook`) to store the gradient.
"""

import torch

torch.manual_seed(0)


def make_model():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(inplace=True),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 2))


store = {}
x = torch.randn(1, 3, 8, 8)

model = make_model()
model[0].register_full_backward_hook(lambda m, gin, gout: store.__setitem__("g", gout[0].data))   # buggy
try:
    model(x)
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "inplace" in str(e), e

model = make_model()


def _hook_g(module, input, output):                                 # fixed
    output.register_hook(lambda grad: store.__setitem__("g", grad.data))


model[0].register_forward_hook(_hook_g)
scores = model(x)
scores[:, 1].sum().backward()
assert store["g"].shape == (1, 4, 6, 6)
print("CONFIRMED")
