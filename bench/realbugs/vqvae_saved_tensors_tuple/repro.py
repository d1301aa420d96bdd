"""Reproduction for `vqvae_saved_tensors_tuple`: nadavbh12/VQ-VAE commit f2a8a05 ("fix bug in backward").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `NearestEmbedFunc.backward` reads `argmin = ctx.saved_variables`, which is the tuple of saved
tensors, and then calls `torch.arange(...).type_as(argmin)`, so every backward that needs the
codebook gradient raises a TypeError; the fix unpacks it with `argmin, = ctx.saved_variables`.
"""

import torch
from torch.autograd import Function


def make_func(fixed):
    class NearestEmbedFunc(Function):
        @staticmethod
        def forward(ctx, input, emb):
            ctx.num_emb = emb.size(1)
            dist = torch.norm(input.unsqueeze(-1) - emb, 2, 1)
            _, argmin = dist.min(-1)
            ctx.save_for_backward(argmin)
            return emb.t().index_select(0, argmin), argmin

        @staticmethod
        def backward(ctx, grad_output, argmin=None):
            if fixed:
                argmin, = ctx.saved_tensors                  # the fix
            else:
                argmin = ctx.saved_tensors                   # buggy: a tuple
            latent_indices = torch.arange(ctx.num_emb).type_as(argmin)
            idx_choices = (argmin.view(-1, 1) == latent_indices.view(1, -1)).type_as(grad_output)
            n_idx_choice = idx_choices.sum(0)
            n_idx_choice[n_idx_choice == 0] = 1
            grad_emb = torch.sum(grad_output.view(-1, grad_output.size(1), 1) * (idx_choices / n_idx_choice).view(-1, 1, ctx.num_emb), 0)
            return grad_output, grad_emb
    return NearestEmbedFunc


x = torch.randn(5, 3, requires_grad=True)
emb = torch.nn.Parameter(torch.rand(3, 4))

out, _ = make_func(False).apply(x, emb)
try:
    out.sum().backward()
    raise AssertionError("expected backward to raise")
except TypeError as exc:
    assert "type_as" in str(exc) and "tuple" in str(exc), exc

out, _ = make_func(True).apply(x, emb)
out.sum().backward()
assert emb.grad is not None and emb.grad.shape == emb.shape

print("CONFIRMED")
