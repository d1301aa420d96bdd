"""Reproduction for `gp_cholfac_on_model`: cornellius-gp/gpytorch commit 25de1c38fb ("improve memory efficiency").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The Cholesky factor computed from the kernel hyper-parameters is stored on `self.model` with its graph, so the graph outlives the step; the fix stores `.clone().detach()`.
"""

import torch

class Model(torch.nn.Module):
    pass

model = Model()
raw = torch.nn.Parameter(torch.tensor(1.5))
gram = torch.eye(3, dtype=torch.float64) * raw.double() + torch.ones(3, 3, dtype=torch.float64)
chol = torch.linalg.cholesky(gram)
model.cholfac_gram_SKhatS = chol                   # buggy: kept on the model with its graph
assert model.cholfac_gram_SKhatS.grad_fn is not None
model.cholfac_gram_SKhatS = chol.clone().detach()  # the fix
assert model.cholfac_gram_SKhatS.grad_fn is None

print("CONFIRMED")
