"""Reproduction for `pyro_trace_detach_inplace`: pyro-ppl/pyro commit 272f24ccbd ("make Trace.detach() not in-place to pass test").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `Trace.detach()` calls `site["value"].detach_()`, detaching in place sample values that other traces and the model still use, so their gradients silently stop; the fix rebinds to `.detach()`.
"""

import torch

loc = torch.nn.Parameter(torch.zeros(2))
value = loc + torch.randn(2)                       # a sample site's value, used by the model
site = {"value": value}
site["value"].detach_()                            # buggy Trace.detach()
assert not value.requires_grad                     # the model's own tensor lost its gradient path
value = loc + torch.randn(2)
site = {"value": value}
site["value"] = site["value"].detach()             # the fix
assert value.requires_grad

print("CONFIRMED")
