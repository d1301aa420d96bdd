"""Reproduction for `kymatio_history_append_err`: kymatio/kymatio commit a1d74ec09f ("MAINT fix reconstruct_torch.py example by calling detach").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The reconstruction loop appends the loss `err` itself to `history` on every iteration (keeping every step's graph), and plotting `history` afterwards converts tensors that require grad to NumPy, which raises "Can't call numpy() on Tensor that requires grad"; the fix appends `err.detach()`.
"""

import numpy as np
import torch

x = torch.randn(8, requires_grad=True)
target = torch.randn(8)
opt = torch.optim.SGD([x], lr=0.1)


def run(detach):
    history = []
    for _ in range(3):
        opt.zero_grad()
        err = ((x - target) ** 2).mean()
        err.backward()
        opt.step()
        history.append(err.detach() if detach else err)
    return np.asarray([h.numpy() for h in history])       # what plotting the history does


try:
    run(False)
    raise AssertionError("expected numpy() to raise")
except RuntimeError as exc:
    assert "Can't call numpy() on Tensor that requires grad" in str(exc), exc
run(True)

print("CONFIRMED")
