"""Reproduction for `morvan_gan_g_backward_after_d_step`: MorvanZhou/PyTorch-Tutorial commit f52e199a4f ("update for new version of torch").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the GAN loop computes `prob_artist1 = D(G_paintings)` once, runs `D_loss.backward(retain_graph=True)`
and `opt_D.step()`, and then `G_loss.backward()` through the same `D` graph, whose saved weights the
discriminator step has just updated in place, so backward raises "modified by an inplace operation" (newer
PyTorch; older versions silently used the updated weights); the fix updates G first and feeds D a detached
`G_paintings` for its own loss.
"""

import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 8))
D = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
opt_D = torch.optim.Adam(D.parameters(), lr=1e-4)
opt_G = torch.optim.Adam(G.parameters(), lr=1e-4)
artist_paintings = torch.randn(4, 8)


def buggy_step():
    G_paintings = G(torch.randn(4, 5))
    prob_artist0 = D(artist_paintings)
    prob_artist1 = D(G_paintings)
    D_loss = -torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
    G_loss = torch.mean(torch.log(1. - prob_artist1))
    opt_D.zero_grad()
    D_loss.backward(retain_graph=True)
    opt_D.step()                                     # modifies D's weights in place
    opt_G.zero_grad()
    G_loss.backward()                                # backward through D's old graph
    opt_G.step()


def fixed_step():
    G_paintings = G(torch.randn(4, 5))
    prob_artist1 = D(G_paintings)
    G_loss = torch.mean(torch.log(1. - prob_artist1))
    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()
    prob_artist0 = D(artist_paintings)
    prob_artist1 = D(G_paintings.detach())
    D_loss = -torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
    opt_D.zero_grad()
    D_loss.backward(retain_graph=True)
    opt_D.step()


try:
    buggy_step()
    raise AssertionError("expected G_loss.backward() to raise")
except RuntimeError as exc:
    assert "modified by an inplace operation" in str(exc)

fixed_step()
fixed_step()

print("CONFIRMED")
