"""Reproduction for `biggan_sn_sv_buffer_graph`: ajbrock/BigGAN-PyTorch commit ddc08327 ("Fix memory leak in SN code").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `self.sv[i][:] = sv` copies a singular value that carries the graph of the weight into a logging buffer,
so the buffer gains a grad_fn (CopySlices/Fill) that chains every training step's graph (memory leak); the fix does the copy
under `torch.no_grad()`.
"""

import torch

weight = torch.nn.Parameter(torch.randn(4, 4))


def graphs_kept(t):
    """How many distinct per-step SVD graphs are reachable from t's grad_fn."""
    seen, stack, svds = set(), [t.grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        svds += type(fn).__name__.startswith("LinalgSvd")
        stack.extend(f for f, _ in fn.next_functions)
    return svds


def run(fixed):
    sv_buf = torch.ones(1)                       # register_buffer('sv0', torch.ones(1))
    for _ in range(3):                           # three training forwards
        sv = torch.linalg.matrix_norm(weight, 2)  # from power_iteration: depends on the weight
        if fixed:
            with torch.no_grad():
                sv_buf[:] = sv
        else:
            sv_buf[:] = sv                       # buggy
        (weight / sv).sum().backward()
    return sv_buf


buggy = run(False)
assert buggy.requires_grad and buggy.grad_fn is not None   # the buffer now holds a graph
assert graphs_kept(buggy) == 3                         # and each step's copy keeps the previous one alive
fixed = run(True)
assert not fixed.requires_grad and fixed.grad_fn is None

print("CONFIRMED")
