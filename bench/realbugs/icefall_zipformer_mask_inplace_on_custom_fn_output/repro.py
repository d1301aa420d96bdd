"""Reproduction for `icefall_zipformer_mask_inplace_on_custom_fn_output`: k2-fsa/icefall commit 1f7741d2b ("remove in-place op").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: in training, attn_output_weights sometimes passes through penalize_abs_values_gt, whose custom Function
(WithLoss) returns its input as-is; after `.view(...)` the weights are a view created inside a custom Function,
so `attn_output_weights.masked_fill_(attn_mask, -inf)` (and `+= attn_mask`) raises; the fix uses the
out-of-place masked_fill / addition.
"""

import torch


class WithLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.y_shape = y.shape
        return x                                        # returns x unmodified

    @staticmethod
    def backward(ctx, ans_grad):
        return ans_grad, torch.ones(ctx.y_shape, dtype=ans_grad.dtype)


bsz, heads, T = 2, 3, 4
q = torch.randn(bsz, heads, T, 8, requires_grad=True)
attn_mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)   # chunk/causal mask


def attention(fixed):
    w = torch.matmul(q, q.transpose(-1, -2))
    w = WithLoss.apply(w, 1e-4 * w)                     # penalize_abs_values_gt(...) during training
    w = w.view(bsz * heads, T, T)
    if fixed:
        w = w.masked_fill(attn_mask, float("-inf"))
    else:
        w.masked_fill_(attn_mask, float("-inf"))       # buggy
    return w.softmax(-1)


try:
    attention(False)
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "is a view and is being modified inplace" in str(e), e
attention(True).sum().backward()
assert q.grad is not None
print("CONFIRMED")
