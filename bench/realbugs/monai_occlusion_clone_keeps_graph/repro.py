"""Reproduction for `monai_occlusion_clone_keeps_graph`: Project-MONAI/MONAI commit deef782c21 ("small changes").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `occlu_im = x.clone()` keeps each occluded copy attached to the input's graph, so every occluded forward pass builds graph back to `x`; the fix uses `x.detach().clone()`.
"""

import torch

x = torch.randn(1, 1, 4, 4, requires_grad=True)
occlu_im = x.clone()                                # buggy
occlu_im[..., 0:2, 0:2] = 0.0
assert occlu_im.grad_fn is not None                 # each occluded copy stays attached to x's graph
occlu_im = x.detach().clone()                       # the fix
occlu_im[..., 0:2, 0:2] = 0.0
assert occlu_im.grad_fn is None

print("CONFIRMED")
