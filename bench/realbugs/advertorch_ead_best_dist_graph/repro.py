"""Reproduction for `advertorch_ead_best_dist_graph`: BorealisAI/advertorch commit 96540e30 ("Fix increasing GPU memory in EAD attack").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: in the EAD iteration loop the evaluation of `xx_k` (which is computed from the slack leaf `yy_k`)
runs with gradient recording, and `_update_if_smaller_dist_succeed` writes `cur_dist[mask] = dist[mask]`
and `final_dist[mask] = dist[mask]` into long-lived tensors, which thereby gain a grad_fn chaining every
iteration's forward graph (with its saved activations): memory grows with the number of iterations.
The fix runs that block under `torch.no_grad()`.
"""

import torch

model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
x = torch.rand(5, 4)


def forward_graphs(t):
    """How many per-iteration model forwards (the ReLU node) are reachable from t's grad_fn."""
    seen, stack, n = set(), [t.grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        n += type(fn).__name__.startswith("ReluBackward")
        stack.extend(f for f, _ in fn.next_functions)
    return n


def attack(fixed, iterations=6):
    yy_k = torch.nn.Parameter(x.clone())            # slack vector
    final_dist = torch.full((5,), 1e10)
    for _ in range(iterations):
        loss_opt = model(yy_k).sum()
        loss_opt.backward()
        yy_k.data.add_(-0.01 * yy_k.grad)
        yy_k.grad.zero_()
        xx_k = torch.clamp(yy_k - 0.01, 0, 1)         # FISTA step: depends on the leaf yy_k
        ctx = torch.no_grad() if fixed else torch.enable_grad()
        with ctx:
            output = model(xx_k)
            dist = ((xx_k - x) ** 2).sum(1) + (output.sum(1) * 0)
            mask = dist < final_dist
            final_dist[mask] = dist[mask]              # buggy: long-lived tensor gains the graph
    return final_dist


buggy = attack(False)
assert buggy.requires_grad and forward_graphs(buggy) == 6    # one graph per iteration kept alive
fixed = attack(True)
assert not fixed.requires_grad and fixed.grad_fn is None

print("CONFIRMED")
