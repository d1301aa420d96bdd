"""Reproduction for `gradcam_shapley_graph_cycle_leak`: jacobgil/pytorch-grad-cam commit cc68c8a ("Fix CUDA memory leak in ShapleyCAM by explicitly breaking the autograd graph (#575)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: with `detach=False` (ShapleyCAM) ActivationsAndGradients keeps the raw layer outputs and the
create_graph gradients, whose graph holds the tensor hook closure that refers back to the object;
this cycle runs through autograd's C++ graph, so Python's GC cannot free it and `release()` (which
only removes the module hooks) leaks the object with its graph on every CAM. The fix's `clear()`
detaches and drops the stored tensors in `release()`.
"""

import gc
import weakref

import torch


class ActivationsAndGradients:
    def __init__(self, model, target_layer):
        self.model = model
        self.gradients, self.activations = [], []
        self.handles = [target_layer.register_forward_hook(self.save_activation),
                        target_layer.register_forward_hook(self.save_gradient)]

    def save_activation(self, module, input, output):
        self.activations.append(output)                       # detach=False

    def save_gradient(self, module, input, output):
        def _store_grad(grad):
            self.gradients = [grad] + self.gradients
        output.register_hook(_store_grad)

    def __call__(self, x):
        self.gradients, self.activations = [], []
        return self.model(x)

    def clear(self):                                          # the fix
        for a in self.activations:
            a.detach_()
        for g in self.gradients:
            g.detach_()
        self.activations.clear()
        self.gradients.clear()

    def release(self, fixed):
        if fixed:
            self.clear()
        for handle in self.handles:
            handle.remove()


def shapley_cam(fixed):
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3), torch.nn.Tanh())
    grabber = ActivationsAndGradients(model, model[1])
    x = torch.randn(2, 4, requires_grad=True)
    out = grabber(x)
    loss = out[:, 0].sum()
    torch.autograd.grad(loss, x, retain_graph=True, create_graph=True)
    acts, grads = grabber.activations[-1], grabber.gradients[-1]
    hvp = torch.autograd.grad(grads, acts, grad_outputs=acts, retain_graph=False, allow_unused=True)[0]
    assert hvp is not None
    grabber.release(fixed)                                   # __exit__ / __del__
    ref = weakref.ref(grabber)
    del grabber, acts, grads, hvp, out, loss, x
    gc.collect()
    return ref() is not None


assert shapley_cam(fixed=False)                              # buggy: the object and its graph are never freed
assert not shapley_cam(fixed=True)

print("CONFIRMED")
