"""Reproduction for `gradcam_hook_activation_keeps_graph`: jacobgil/pytorch-grad-cam commit 137dbd1 ("Detach tensors in hooks to avoid leak").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the forward hook stores `activation.cpu()` in `self.activations`; the stored tensor still has
its grad_fn, and since the CAM runs `loss.backward(retain_graph=True)`, the whole forward graph with
its saved buffers stays alive on the long-lived ActivationsAndGradients object after the CAM call.
The fix stores `activation.cpu().detach()`.
"""

import torch


class ActivationsAndGradients:
    def __init__(self, model, target_layer, fixed):
        self.model, self.fixed = model, fixed
        self.activations = []
        target_layer.register_forward_hook(self.save_activation)

    def save_activation(self, module, input, output):
        self.activations.append(output.cpu().detach() if self.fixed else output.cpu())

    def __call__(self, x):
        self.activations = []
        return self.model(x)


def cam(fixed):
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).eval()
    grabber = ActivationsAndGradients(model, model[1], fixed)
    output = grabber(torch.randn(2, 4))
    model.zero_grad()
    loss = output[0, 0] + output[1, 2]
    loss.backward(retain_graph=True)
    activations = grabber.activations[-1].cpu().data.numpy()
    assert activations.shape == (2, 8)
    return grabber                                    # the object lives on between CAM calls


kept = cam(fixed=False).activations[-1]
assert kept.grad_fn is not None                       # buggy: the stored activation holds the forward graph
assert kept.grad_fn._saved_result is not None         # ... with its saved buffers (retain_graph=True)
assert cam(fixed=True).activations[-1].grad_fn is None

print("CONFIRMED")
