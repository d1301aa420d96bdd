"""Reproduction for `tntorch_loss_history_graph`: rballester/tntorch commit 67f8679d ("Fixed memory leak in loss history").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `optimize()` appends each iteration's total loss, with its graph, to the `losses` history list and calls
`losses[-1].backward(retain_graph=True)`, so every iteration's graph and its saved buffers stay reachable from the
list for the whole optimisation (memory grows with the iteration count). The fix appends `total_loss.detach()`.
"""

import torch

torch.manual_seed(0)


def saved_tensors_alive(roots):
    """Saved tensors (still readable, i.e. not freed) reachable from the graphs of `roots`."""
    seen, stack, n = set(), [r.grad_fn for r in roots], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        for name in dir(fn):
            if name.startswith("_saved_"):
                try:
                    n += isinstance(getattr(fn, name), torch.Tensor)
                except RuntimeError:                       # freed by backward
                    pass
        stack.extend(f for f, _ in fn.next_functions)
    return n


def optimize(fixed, iters=5):
    core = torch.randn(4, 4, requires_grad=True)
    target = torch.randn(4, 4)
    optimizer = torch.optim.Adam([core])
    losses = []
    for _ in range(iters):
        optimizer.zero_grad()
        h = torch.tanh(core @ core)                     # a saved intermediate of this iteration's graph
        loss = [((h - target) ** 2).sum()]
        total_loss = sum(loss)
        if fixed:
            total_loss.backward(retain_graph=True)
            optimizer.step()
            losses.append(total_loss.detach())
        else:
            losses.append(total_loss)                   # buggy: history keeps the graph
            losses[-1].backward(retain_graph=True)
            optimizer.step()
    return losses


losses = optimize(False)
assert all(l.grad_fn is not None for l in losses)
per_iter = saved_tensors_alive(losses[:1])
assert per_iter > 0 and saved_tensors_alive(losses) == 5 * per_iter   # all 5 graphs + buffers kept alive
losses = optimize(True)
assert all(l.grad_fn is None for l in losses) and saved_tensors_alive(losses) == 0

print("CONFIRMED")
