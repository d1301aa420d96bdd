"""Reproduction for `torchopt_apollo_create_graph_state`: jettify/pytorch-optimizer commit 4e57caa0 ("Fix apollo in case of .backward(create_graph = True)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: Apollo's `step()` is not run under no_grad and reads `grad = p.grad`; after
`loss.backward(create_graph=True)` that gradient carries a graph, so `exp_avg_grad.add_(delta_grad, ...)`
gives the optimizer-state buffer a grad_fn and each step chains onto the previous one (the state keeps every
step's double-backward graph alive). The fix reads `grad = p.grad.data`.
"""

import torch

p = torch.nn.Parameter(torch.randn(3))


def step_graphs(t):
    """How many per-step loss graphs (PowBackward nodes) are reachable from t."""
    seen, stack, n = set(), [t.grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        n += type(fn).__name__.startswith("PowBackward")
        stack.extend(f for f, _ in fn.next_functions)
    return n


def train(fixed, steps=4):
    exp_avg_grad = torch.zeros_like(p)            # state['exp_avg_grad']
    for _ in range(steps):
        p.grad = None
        loss = (p ** 3).sum()
        loss.backward(create_graph=True)
        grad = p.grad.data if fixed else p.grad    # buggy: p.grad
        delta_grad = grad - exp_avg_grad
        exp_avg_grad.add_(delta_grad, alpha=0.1)
        p.data.add_(exp_avg_grad, alpha=-0.01)
    return exp_avg_grad


buggy = train(False)
assert buggy.grad_fn is not None and step_graphs(buggy) == 4   # every step's graph kept in the state
fixed = train(True)
assert fixed.grad_fn is None and not fixed.requires_grad

print("CONFIRMED")
