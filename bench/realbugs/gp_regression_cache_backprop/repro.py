"""Reproduction for `gp_regression_cache_backprop`: cornellius-gp/gpytorch commit 0fcd5458c0 ("Don't backprop through regression caches").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The regression cache (`root_decomposition()` of the training covariance) is cached with its graph and reused across calls; the fix detaches it so backward does not run through (or re-enter) the cached graph.
"""

import torch

def raises(fn, text):
    try:
        fn()
    except RuntimeError as exc:
        assert text in str(exc), exc
        return
    raise AssertionError("expected RuntimeError: " + text)

class Strategy:
    def __init__(self):
        self.w = torch.nn.Parameter(torch.randn(3))
    def forward(self, detach):
        if not hasattr(self, "_mean_cache"):
            cache = torch.exp(self.w)               # `induc_induc_covar.inv_matmul(mean_diff)`
            self._mean_cache = cache.detach() if detach else cache
        return (self._mean_cache * self.w).sum()

def run(detach):
    s = Strategy()
    for _ in range(2):                             # two training steps
        s.forward(detach).backward()

raises(lambda: run(False), "Trying to backward through the graph a second time")
run(True)

print("CONFIRMED")
