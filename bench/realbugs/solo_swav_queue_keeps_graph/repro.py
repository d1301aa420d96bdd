"""Reproduction for `solo_swav_queue_keeps_graph`: vturrisi/solo-learn commit 049e106d ("fixed memory leak").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `self.queue[:, :bs] = z` writes the projections (which carry the autograd graph of the network)
into a registered queue buffer outside no_grad, so the buffer acquires a grad_fn (CopySlices) and the
shifting `queue[:, bs:] = queue[:, :-bs].clone()` chains every step's graph onto the next one (memory
leak); the fix stores `z.detach()`.
"""

import torch

proj = torch.nn.Linear(8, 4)


def graphs_kept(t):
    """How many distinct per-step Linear (addmm) graphs are reachable from t's grad_fn."""
    seen, stack, n = set(), [t.grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        n += type(fn).__name__.startswith("Addmm")
        stack.extend(f for f, _ in fn.next_functions)
    return n


def run(fixed):
    queue = torch.zeros(2, 12, 4)                 # register_buffer('queue', ...)
    for _ in range(3):                            # three training steps
        z1 = proj(torch.randn(3, 8))
        z2 = proj(torch.randn(3, 8))
        loss = (z1 * z2).sum()
        z = torch.stack((z1, z2))
        queue[:, z.size(1):] = queue[:, :-z.size(1)].clone()
        if fixed:
            queue[:, :z.size(1)] = z.detach()
        else:
            queue[:, :z.size(1)] = z              # buggy
        loss.backward()
    return queue


buggy = run(False)
assert buggy.requires_grad and buggy.grad_fn is not None   # the buffer now holds a graph
assert graphs_kept(buggy) >= 3                             # each step's graph stays reachable
fixed = run(True)
assert not fixed.requires_grad and fixed.grad_fn is None

print("CONFIRMED")
