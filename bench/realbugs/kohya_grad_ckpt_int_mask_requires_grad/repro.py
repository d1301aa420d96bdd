"""Reproduction for `kohya_grad_ckpt_int_mask_requires_grad`: kohya-ss/sd-scripts commit 9a4cc53a ("Fix issue: RuntimeError: only Tensors of floating point dtype can require gradients").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: with gradient checkpointing the trainer calls `t.requires_grad_(True)` on every element of
text_encoder_conds, which for FLUX includes the integer T5 attention mask, and torch raises
"only Tensors of floating point dtype can require gradients"; the fix skips non-floating tensors.
"""

import torch

l_pooled = torch.randn(1, 8)
t5_out = torch.randn(1, 6, 8)
txt_ids = torch.zeros(1, 6, 3)
t5_attn_mask = torch.ones(1, 6, dtype=torch.long)          # tokenizer attention mask
text_encoder_conds = [l_pooled, t5_out, txt_ids, t5_attn_mask]

try:
    for t in text_encoder_conds:
        t.requires_grad_(True)                               # buggy
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "floating point" in str(e), e

conds = [t.detach() for t in text_encoder_conds]
for t in conds:
    if t.is_floating_point():                                # fixed
        t.requires_grad_(True)
assert conds[1].requires_grad and not conds[3].requires_grad
print("CONFIRMED")
