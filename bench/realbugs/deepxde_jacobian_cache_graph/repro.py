"""Reproduction for `deepxde_jacobian_cache_graph`: lululxvi/deepxde commit 5519fe09 ("Fix memory leak of grad in PyTorch").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `dde.grad.jacobian` memoises Jacobian objects in a module-level dict keyed by `(ys, xs)`; with the PyTorch
backend every training iteration creates new input/output tensors, so the dict gains an entry per iteration, each
holding the network output (with its graph) and the create_graph=True derivative, and nothing is ever freed (memory
grows with the iterations). The fix calls `grad.clear()` in the PyTorch `compute_losses` of every iteration.
"""

import torch


class Jacobian:
    def __init__(self, ys, xs):
        self.ys, self.xs, self.J = ys, xs, {}

    def __call__(self, i=0):
        if i not in self.J:
            self.J[i] = torch.autograd.grad(self.ys[:, i:i + 1], self.xs,
                                            grad_outputs=torch.ones_like(self.ys[:, i:i + 1]),
                                            create_graph=True)[0]
        return self.J[i]


class Jacobians:
    def __init__(self):
        self.Js = {}

    def __call__(self, ys, xs, i=0):
        key = (ys, xs)
        if key not in self.Js:
            self.Js[key] = Jacobian(ys, xs)
        return self.Js[key](i)

    def clear(self):
        self.Js = {}


net = torch.nn.Sequential(torch.nn.Linear(1, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)


def train(fixed, iterations=5):
    jacobian = Jacobians()                        # module-level cache (jacobian._fn)
    for _ in range(iterations):
        inputs = torch.rand(16, 1)
        inputs.requires_grad_()
        outputs = net(inputs)
        dy_x = jacobian(outputs, inputs)         # PDE residual uses the derivative
        losses = torch.stack([((dy_x - torch.cos(inputs)) ** 2).mean()])
        if fixed:
            jacobian.clear()                      # grad.clear()
        opt.zero_grad()
        losses.sum().backward()
        opt.step()
    return jacobian


buggy = train(False)
assert len(buggy.Js) == 5                                          # one entry per iteration ...
assert all(j.ys.grad_fn is not None for j in buggy.Js.values())    # ... each holding a graph
fixed = train(True)
assert len(fixed.Js) == 0

print("CONFIRMED")
