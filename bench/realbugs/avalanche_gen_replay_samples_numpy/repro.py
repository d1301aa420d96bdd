"""Reproduction for `avalanche_gen_replay_samples_numpy`: ContinualAI/avalanche commit 387e7110 ("detach() samples.").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `samples = model.generate(10)` decodes random latents with the trainable decoder outside no_grad, so the
samples require grad and `samples.cpu().numpy()` raises; the fix calls `.detach()` before `.numpy()`.
"""

import torch

decoder = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Sigmoid())


def generate(batch_size):
    z = torch.randn((batch_size, 2))
    return decoder(z)


samples = generate(10)
try:
    samples.cpu().numpy()                                    # buggy
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "requires grad" in str(e), e
arr = samples.detach().cpu().numpy()                         # fixed
assert arr.shape == (10, 16)
print("CONFIRMED")
