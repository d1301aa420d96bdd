"""Reproduction for `gp_prediction_cache_not_detached`: cornellius-gp/gpytorch commit c6139a7114 ("Detach mean and covar caches.").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The precomputed predictive cache is returned with its graph and reused on later calls, so a later backward re-enters a freed graph (or keeps it alive); the fix returns `.detach()`.
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
