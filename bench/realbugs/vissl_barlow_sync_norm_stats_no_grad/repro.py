"""Reproduction for `vissl_barlow_sync_norm_stats_no_grad`: facebookresearch/vissl commit 2125fb0b ("Backward pass was dysfunctional").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `_sync_normalize` computes the batch mean and variance of the embeddings under `torch.no_grad()` and then
returns `(embedding - mean) / torch.sqrt(var + eps)`, so backward treats the batch statistics as constants and
the Barlow Twins gradient is wrong (it differs from batch normalisation's true gradient); the fix implements the
normalisation as an autograd Function whose backward includes the mean/variance terms.
"""

import torch

torch.manual_seed(0)
emb = torch.randn(8, 4, requires_grad=True)
eps = 1e-5


def barlow_loss(za, zb, lambda_=0.005):
    c = za.T @ zb / za.shape[0]
    on = torch.diagonal(c).add(-1).pow(2).sum()
    off = (c - torch.diag(torch.diagonal(c))).pow(2).sum()
    return on + lambda_ * off


def normalize_buggy(x):
    with torch.no_grad():
        mean = x.mean(0)
        var = x.pow(2).mean(0) - mean.pow(2)
    return (x - mean) / torch.sqrt(var + eps)


def normalize_true(x):                      # what the fix's SyncNormalizeFunction computes (world size 1)
    mean = x.mean(0)
    var = x.pow(2).mean(0) - mean.pow(2)
    return (x - mean) / torch.sqrt(var + eps)


def grad_of(normalize):
    emb.grad = None
    z = normalize(emb)
    za, zb = z[:4], z[4:]
    barlow_loss(za, zb).backward()
    return emb.grad.clone(), z.detach()


g_buggy, z_buggy = grad_of(normalize_buggy)
g_true, z_true = grad_of(normalize_true)
assert torch.allclose(z_buggy, z_true)                  # same forward value
assert not torch.allclose(g_buggy, g_true, atol=1e-4)   # but a different (wrong) gradient
ref = torch.nn.functional.batch_norm(emb, None, None, training=True, eps=eps)
assert torch.allclose(ref, z_true, atol=1e-5)

print("CONFIRMED")
