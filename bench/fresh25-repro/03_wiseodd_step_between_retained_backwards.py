"""fresh25 real: wiseodd/generative-models GAN/gibbsnet/gibbsnet_pytorch.py:89, 95 and
GAN/softmax_gan/softmax_gan_pytorch.py:72, 78 (GS308, the step and the backward that then raises).

Both scripts compute the discriminator's outputs once, run `D_loss.backward(retain_graph=True)`, step the
discriminator's optimizer (gibbsnet also steps the generator's, `G_solver.step()`), `reset_grad()`, and only then
backward `G_loss`, built from the same `p_data`/`p_model` (`D_real`/`D_fake`) graph. The step writes the
discriminator's Linear weights in place, which that graph saved, so `G_loss.backward()` raises "one of the variables
needed for gradient computation has been modified by an inplace operation" at the first iteration. Run below with
the same statements and the same networks (smaller sizes, random data instead of MNIST).
"""
from itertools import chain

import torch
import torch.nn.functional as nn
import torch.optim as optim
from torch.autograd import Variable

torch.manual_seed(0)
mb_size, X_dim, z_dim, h_dim, N, lr = 16, 20, 6, 12, 10, 1e-4


def log(x):
    return torch.log(x + 1e-8)


def gibbsnet_iteration():
    Q = torch.nn.Sequential(torch.nn.Linear(X_dim, h_dim), torch.nn.ReLU(), torch.nn.Linear(h_dim, z_dim))
    P = torch.nn.Sequential(torch.nn.Linear(z_dim, h_dim), torch.nn.ReLU(), torch.nn.Linear(h_dim, X_dim),
                            torch.nn.Sigmoid())
    D_ = torch.nn.Sequential(torch.nn.Linear(X_dim + z_dim, h_dim), torch.nn.ReLU(), torch.nn.Linear(h_dim, 1),
                             torch.nn.Sigmoid())

    def D(X, z):
        return D_(torch.cat([X, z], 1))

    def reset_grad():
        Q.zero_grad()
        P.zero_grad()
        D_.zero_grad()

    G_solver = optim.Adam(chain(Q.parameters(), P.parameters()), lr=lr)
    D_solver = optim.Adam(D_.parameters(), lr=lr)
    X = Variable(torch.rand(mb_size, X_dim))
    z_hat = Q(X)
    z = Variable(torch.randn(mb_size, z_dim))
    for _ in range(N):
        z_n = z.clone()
        X_hat = P(z_n)
        z = Q(X_hat)
    p_data = D(X, z_hat)
    p_model = D(X_hat, z_n)
    D_loss = -torch.mean(log(p_data) + log(1 - p_model))
    D_loss.backward(retain_graph=True)
    D_solver.step()                                      # gibbsnet_pytorch.py:89
    G_solver.step()
    reset_grad()
    G_loss = -torch.mean(log(p_model) + log(1 - p_data))
    G_loss.backward()                                    # gibbsnet_pytorch.py:95


def softmax_gan_iteration():
    G = torch.nn.Sequential(torch.nn.Linear(z_dim, h_dim), torch.nn.ReLU(), torch.nn.Linear(h_dim, X_dim),
                            torch.nn.Sigmoid())
    D = torch.nn.Sequential(torch.nn.Linear(X_dim, h_dim), torch.nn.ReLU(), torch.nn.Linear(h_dim, 1))

    def reset_grad():
        G.zero_grad()
        D.zero_grad()

    G_solver = optim.Adam(G.parameters(), lr=lr)
    D_solver = optim.Adam(D.parameters(), lr=lr)
    D_target, G_target = 1. / mb_size, 1. / (mb_size * 2)
    z = Variable(torch.randn(mb_size, z_dim))
    X = Variable(torch.rand(mb_size, X_dim))
    G_sample = G(z)
    D_real = D(X)
    D_fake = D(G_sample)
    Z = torch.sum(torch.exp(-D_real)) + torch.sum(torch.exp(-D_fake))
    D_loss = torch.sum(D_target * D_real) + log(Z)
    D_loss.backward(retain_graph=True)
    D_solver.step()                                      # softmax_gan_pytorch.py:72
    reset_grad()
    G_loss = torch.sum(G_target * D_real) + torch.sum(G_target * D_fake) + log(Z)
    G_loss.backward()                                    # softmax_gan_pytorch.py:78
    G_solver.step()


for name, it in (("gibbsnet", gibbsnet_iteration), ("softmax_gan", softmax_gan_iteration)):
    try:
        it()
    except RuntimeError as e:
        print(name, "raises at G_loss.backward():", str(e)[:110])
        assert "modified by an inplace operation" in str(e)
    else:
        raise AssertionError(name + ": no error")
