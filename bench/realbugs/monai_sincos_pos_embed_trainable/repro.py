"""Reproduction for `monai_sincos_pos_embed_trainable`: Project-MONAI/MONAI commit 5b8bb930a1 ("Fixing gradient in sincos positional encoding in monai/networks/blocks").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The fixed sin-cos position embedding is an `nn.Parameter` filled with `.data.copy_` but left with `requires_grad=True`, so the optimizer trains it although it should stay fixed; the fix sets `requires_grad = False`.
"""

import torch

position_embeddings = torch.nn.Parameter(torch.zeros(1, 4, 8))
pos = torch.randn(1, 4, 8)
position_embeddings.data.copy_(pos)                 # buggy: still trainable
opt = torch.optim.SGD([position_embeddings], lr=1.0)
(position_embeddings * torch.randn(1, 4, 8)).sum().backward()
opt.step()
assert not torch.equal(position_embeddings.detach(), pos)   # the "fixed" embedding was trained
position_embeddings = torch.nn.Parameter(torch.zeros(1, 4, 8))
position_embeddings.data.copy_(pos)
position_embeddings.requires_grad = False           # the fix
assert not position_embeddings.requires_grad

print("CONFIRMED")
