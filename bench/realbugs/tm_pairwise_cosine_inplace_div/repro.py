"""Reproduction for `tm_pairwise_cosine_inplace_div`: Lightning-AI/torchmetrics commit a4eabd9d98 ("Fix inplace operation in `pairwise_cosine_similarity` (#1288)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `norm = torch.norm(x, ...)` saves `x` for backward and `x /= norm.unsqueeze(1)` then modifies it in place; backward through `norm` raises "modified by an inplace operation" when `x` requires grad (it also silently alters the caller's tensor).
"""

import torch

def raises(fn, text):
    try:
        fn()
    except RuntimeError as exc:
        assert text in str(exc), exc
        return
    raise AssertionError("expected RuntimeError: " + text)

def buggy():
    x = torch.randn(3, 4, requires_grad=True).clone()  # the caller's embeddings, with history
    norm = torch.norm(x, p=2, dim=1)
    x /= norm.unsqueeze(1)
    x.sum().backward()

def fixed():
    x = torch.randn(3, 4, requires_grad=True).clone()
    norm = torch.norm(x, p=2, dim=1)
    x = x / norm.unsqueeze(1)
    x.sum().backward()

raises(buggy, "modified by an inplace operation")
fixed()

print("CONFIRMED")
