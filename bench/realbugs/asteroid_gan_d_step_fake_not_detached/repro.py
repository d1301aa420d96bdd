"""Reproduction for `asteroid_gan_d_step_fake_not_detached`: asteroid-team/asteroid commit d539faba ("fix detach").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: in the discriminator step `est_false_labels = self.discriminator(estimates, inputs, targets)` feeds the
generator output without `.detach()`, so `d_loss.backward()` also writes the discriminator-loss gradient into the
generator's parameters; only the discriminator optimizer is stepped and zeroed in that step, so the generator's
next update applies that stale, wrongly-signed gradient on top of its own. The fix detaches the estimates given
to the discriminator.
"""

import torch

torch.manual_seed(0)
G = torch.nn.Linear(4, 4)
D = torch.nn.Sequential(torch.nn.Linear(4, 1), torch.nn.Sigmoid())
opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
bce = torch.nn.BCELoss()
inputs, targets = torch.randn(8, 4), torch.randn(8, 4)


def d_step(fixed):
    """optimizer_idx == 0 under Lightning's loop: backward, step and zero_grad of D's optimizer only."""
    estimates = G(inputs)
    true_loss = bce(D(targets), torch.ones(8, 1))
    fake_in = estimates.detach() if fixed else estimates      # buggy: not detached
    fake_loss = bce(D(fake_in), torch.zeros(8, 1))
    d_loss = (true_loss + fake_loss) * 0.5
    d_loss.backward()
    opt_d.step()
    opt_d.zero_grad()


for fixed in (False, True):
    opt_g.zero_grad(set_to_none=True)
    d_step(fixed)
    leftover = G.weight.grad
    if fixed:
        assert leftover is None                                # generator untouched by the D step
    else:
        assert leftover is not None and leftover.abs().sum() > 0   # stale D-loss gradient waiting in G
        # the next generator step adds its own gradient on top of it
        g_only = torch.autograd.grad(bce(D(G(inputs)), torch.ones(8, 1)), G.weight)[0]
        bce(D(G(inputs)), torch.ones(8, 1)).backward()
        assert not torch.allclose(G.weight.grad, g_only)

print("CONFIRMED")
