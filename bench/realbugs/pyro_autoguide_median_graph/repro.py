"""Reproduction for `pyro_autoguide_median_graph`: pyro-ppl/pyro commit 1d97a08b55 ("Detach AutoGuide.median() and .quantiles()").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `median()` returns the guide's outputs computed in grad mode, so the caller keeps their graph (and `.numpy()` on them raises); the fix decorates with `torch.no_grad()` and detaches.
"""

import torch

loc = torch.nn.Parameter(torch.zeros(3))
def guide():
    return {"z": loc * 1.0}
median = guide()                                   # buggy: computed in grad mode
assert median["z"].grad_fn is not None
try:
    median["z"].numpy()
    raise AssertionError("expected numpy() to raise")
except RuntimeError as exc:
    assert "Can't call numpy() on Tensor that requires grad" in str(exc)
with torch.no_grad():                              # the fix
    median = {k: v.detach() for k, v in guide().items()}
median["z"].numpy()

print("CONFIRMED")
