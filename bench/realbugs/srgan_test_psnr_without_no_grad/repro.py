"""Reproduction for `srgan_test_psnr_without_no_grad`: Lornatang/SRGAN-PyTorch commit 2e957a3c7c ("Fix some error").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `test_psnr`/`test_gan` run `sr = model(lr)` for every evaluation batch in grad mode (the model's
parameters require grad), so each batch builds the generator's autograd graph and keeps its saved activations
alive until the next batch replaces `sr`, although only `.item()` values are used; the fix wraps the call in
`torch.no_grad()`.
"""

import math

import torch

model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 3, 3, padding=1))
model.eval()
psnr_criterion = torch.nn.MSELoss()
saved = []


def pack(t):
    saved.append(t.shape)          # every tensor autograd saves for a backward that never comes
    return t


def test_psnr(fixed):
    saved.clear()
    total = 0.0
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        for _ in range(2):
            lr = torch.rand(1, 3, 8, 8)
            hr = torch.rand(1, 3, 8, 8)
            if fixed:
                with torch.no_grad():                    # the fix
                    sr = model(lr)
            else:
                sr = model(lr)                           # buggy: grad mode
            total += 10 * math.log10(1.0 / psnr_criterion(sr, hr).item())
    return sr, len(saved)


sr, n_saved = test_psnr(False)
assert sr.requires_grad and sr.grad_fn is not None      # buggy: every batch builds the generator's graph
assert n_saved > 0                                      # ... and saves activations for backward

sr, n_saved = test_psnr(True)
assert not sr.requires_grad and sr.grad_fn is None
assert n_saved == 0

print("CONFIRMED")
