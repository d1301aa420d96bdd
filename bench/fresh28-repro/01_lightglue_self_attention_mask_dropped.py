"""GS212 real: cvg/glue-factory gluefactory/models/matchers/lightglue.py:126.

`Attention.forward`'s fallback branch (taken when `F.scaled_dot_product_attention` is missing, i.e. torch < 2.0,
which the project's `torch>=1.7` allows) computes `sim`, then `if mask is not None: sim.masked_fill(~mask,
-float("inf"))` and throws the result away, so the softmax attends to the padded keypoints too. It is the self-attention
of `TransformerLayer.masked_forward` (used when both images' keypoint masks are given, i.e. padded batches); the
cross-attention's own fallback (line 210) writes `sim = sim.masked_fill(...)`. The program runs the branch (forcing
the no-SDPA path as torch < 2.0 would take it) and compares with what the mask asks for (SDPA with the mask).
"""
import torch
import torch.nn.functional as F
from typing import Optional

FLASH_AVAILABLE = False  # what `hasattr(F, "scaled_dot_product_attention")` gives on torch < 2.0


class Attention(torch.nn.Module):  # the repository's Attention, forward as written
    def __init__(self, allow_flash: bool) -> None:
        super().__init__()
        self.enable_flash = allow_flash and FLASH_AVAILABLE

    def forward(self, q, k, v, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        if self.enable_flash and q.device.type == "cuda":
            if FLASH_AVAILABLE:
                args = [x.half().contiguous() for x in [q, k, v]]
                v = F.scaled_dot_product_attention(*args, attn_mask=mask).to(q.dtype)
                return v if mask is None else v.nan_to_num()
        elif FLASH_AVAILABLE:
            args = [x.contiguous() for x in [q, k, v]]
            v = F.scaled_dot_product_attention(*args, attn_mask=mask)
            return v if mask is None else v.nan_to_num()
        else:
            s = q.shape[-1] ** -0.5
            sim = torch.einsum("...id,...jd->...ij", q, k) * s
            if mask is not None:
                sim.masked_fill(~mask, -float("inf"))
            attn = F.softmax(sim, -1)
            return torch.einsum("...ij,...jd->...id", attn, v)


torch.manual_seed(0)
b, h, n, d = 1, 2, 6, 4
q, k, v = (torch.randn(b, h, n, d) for _ in range(3))
valid = torch.tensor([[True] * 4 + [False] * 2])              # 4 real keypoints, 2 padding
mask0 = (valid[:, None, :, None] & valid[:, None, None, :])   # masked_forward: mask0 & mask0.transpose(-1, -2)

attn = Attention(allow_flash=False)
with_mask = attn(q, k, v, mask0)
without_mask = attn(q, k, v, None)
expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask0).nan_to_num()

assert torch.equal(with_mask, without_mask)                   # the mask changes nothing
rows = valid[0]
assert not torch.allclose(with_mask[..., rows, :], expected[..., rows, :], atol=1e-5)  # real keypoints differ
print("max difference on the real keypoints:", (with_mask - expected)[..., rows, :].abs().max().item())
print("real: the self-attention mask is ignored on the fallback path")
