"""Reproduction for `torchac_grad_norm_frozen_params`: lcswillems/torch-ac commit 6a63ac6 ("Allow frozen parameters with requires_grad=False").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: after `batch_loss.backward()`, a parameter with `requires_grad=False` has `p.grad is None`, so
`sum(p.grad.data.norm(2).item() ** 2 for p in self.acmodel.parameters())` raises AttributeError; the fix
only looks at parameters that require grad.
"""

import torch

model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 1))
for p in model[0].parameters():
    p.requires_grad = False                           # a frozen part of the model

loss = model(torch.randn(4, 3)).sum()
loss.backward()

try:
    sum(p.grad.data.norm(2).item() ** 2 for p in model.parameters()) ** 0.5
    raise AssertionError("expected an error")
except AttributeError as e:
    assert "NoneType" in str(e)

grad_norm = sum(p.grad.data.norm(2).item() ** 2 for p in model.parameters() if p.requires_grad) ** 0.5   # the fix
torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 0.5)
assert grad_norm > 0
print("CONFIRMED")
