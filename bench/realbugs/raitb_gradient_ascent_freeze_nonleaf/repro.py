"""Reproduction for `raitb_gradient_ascent_freeze_nonleaf`: mit-ll-responsible-ai/responsible-ai-toolbox commit a8fe91d8 ("gradient_ascent: detach non-leaf tensors").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `gradient_ascent` enters `frozen(data, target, model)`, which calls `requires_grad_(False)` on every tensor;
when the caller passes data/target that are non-leaf tensors with history (e.g. `x = 1 * x_leaf`), torch raises
"you can only change requires_grad flags of leaf variables". The fix detaches non-leaf data/target first.
"""

import torch


def freeze(*items):                       # the shape of rai_toolbox's freeze()/frozen
    states = {}
    for p in items:
        states[p] = p.requires_grad
        p.requires_grad_(False)
    return lambda: [p.requires_grad_(s) for p, s in states.items()]


def gradient_ascent(data, target, fixed, steps=2):
    data, target = torch.as_tensor(data), torch.as_tensor(target)
    if fixed:
        if not data.is_leaf:
            data = data.detach()
        if not target.is_leaf:
            target = target.detach()
    delta = torch.zeros_like(data, requires_grad=True)       # the perturbation model's parameter
    optim = torch.optim.SGD([delta], lr=1.0)
    unfreeze = freeze(data, target)
    try:
        with torch.enable_grad():
            for _ in range(steps):
                loss = ((data + delta) ** 2 - target).sum()
                optim.zero_grad()
                loss.backward()
                optim.step()
    finally:
        unfreeze()
    return (data + delta).detach()


x_leaf = torch.tensor([2.0], requires_grad=True)
x = 1 * x_leaf                                        # non-leaf with history
try:
    gradient_ascent(x, x, fixed=False)
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "leaf variables" in str(e), e
out = gradient_ascent(x, x, fixed=True)
assert x_leaf.grad is None and out.shape == (1,)

print("CONFIRMED")
