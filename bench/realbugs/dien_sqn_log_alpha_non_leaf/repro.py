"""Reproduction for `dien_sqn_log_alpha_non_leaf`: opendilab/DI-engine commit 23d4df2b ("fix non-leaf bug for log_alpha when use_cuda=True").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `torch.log(torch.tensor([alpha])).requires_grad_(True).to(self._device)` calls `requires_grad_` BEFORE the
device move, so whenever the device differs (use_cuda=True) `.to()` returns a copy with a grad_fn (a non-leaf), and
`torch.optim.Adam([self._log_alpha])` raises "can't optimize a non-leaf Tensor"; the fix moves first and then calls
`requires_grad_(True)`. (This CPU-only repro uses the 'meta' device as the "other" device; the statement shape is the same.)
"""

import math

import torch

alpha, device = 0.2, torch.device("meta")      # any device other than where the tensor was made (cuda in the project)

log_alpha = torch.log(torch.tensor([alpha])).requires_grad_(True).to(device)   # buggy
assert not log_alpha.is_leaf and log_alpha.grad_fn is not None
try:
    torch.optim.Adam([log_alpha], lr=3e-4)
    raise AssertionError("buggy form did not raise")
except ValueError as e:
    assert "non-leaf" in str(e), e

log_alpha = torch.FloatTensor([math.log(alpha)]).to(device).requires_grad_(True)   # fixed
assert log_alpha.is_leaf
torch.optim.Adam([log_alpha], lr=3e-4)

print("CONFIRMED")
