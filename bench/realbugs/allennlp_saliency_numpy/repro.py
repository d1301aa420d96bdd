"""Reproduction for `allennlp_saliency_numpy`: allenai/allennlp commit 1e7327b6ae ("make saliency interpreter GPU compatible").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `embeddings.numpy()` on gradient tensors captured by the saliency hooks (which require grad / live on the GPU) raises; the fix calls `.detach().cpu().numpy()`.
"""

import torch

model = torch.nn.Linear(3, 2)
data = model(torch.randn(1, 3))                    # a tensor produced in grad mode
try:
    data.numpy()                                   # buggy
    raise AssertionError("expected numpy() to raise")
except RuntimeError as exc:
    assert "Can't call numpy() on Tensor that requires grad" in str(exc)
data.detach().cpu().numpy()                        # the fix

print("CONFIRMED")
