"""fresh25 false: wiseodd/generative-models GAN/gibbsnet/gibbsnet_pytorch.py:84 (GS402, "`p_model = D(X_hat, z_n)`
carries the previous iteration's graph, which the backward at line 95 frees; the next iteration's backward then
raises; pass `X_hat.detach()`").

Each iteration of `for it in range(1000000)` starts a new chain: `z = Variable(torch.randn(mb_size, z_dim))`, then
`for _ in range(N): z_n = z.clone(); X_hat = P(z_n); z = Q(X_hat)` with the module constant `N = 10`, so `X_hat`
and `z_n` at line 84 are always this iteration's (the loop always runs). The `if it % 100 == 0:` sampling block
re-binds `X_hat`/`z_n`/`z` with graphs too, but the next iteration's Gibbs loop replaces them before line 84.
Line 84 is never reached with an earlier iteration's graph, and the only backwards through `p_model`'s graph are
this iteration's two. (The script does fail, at its first iteration, for the reason GS308 gives at lines 89/95:
the steps between the two backwards; bench/fresh25-repro/03.) Run below with the same statements: as written,
iteration 0 raises the in-place error and not the second-backward one; with the two steps moved after the second
backward (GS308's fix) and the sampling block run every iteration, 5 iterations run, and the `X_hat` line 84 reads
is always the one the same iteration's Gibbs loop made.
"""
from itertools import chain

import torch
import torch.optim as optim
from torch.autograd import Variable

torch.manual_seed(0)
mb_size, X_dim, z_dim, h_dim, lr, N = 16, 20, 6, 12, 1e-4, 10


def log(x):
    return torch.log(x + 1e-8)


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


def run(iterations, steps_between):
    made_here = []
    for it in range(iterations):
        X = Variable(torch.rand(mb_size, X_dim))
        z_hat = Q(X)
        z = Variable(torch.randn(mb_size, z_dim))
        for _ in range(N):
            z_n = z.clone()
            X_hat = P(z_n)
            z = Q(X_hat)
        gibbs_X_hat = X_hat
        p_data = D(X, z_hat)
        p_model = D(X_hat, z_n)                                          # gibbsnet_pytorch.py:84
        made_here.append(X_hat is gibbs_X_hat)
        D_loss = -torch.mean(log(p_data) + log(1 - p_model))
        D_loss.backward(retain_graph=True)
        if steps_between:                                                # as written (lines 89-91)
            D_solver.step()
            G_solver.step()
            reset_grad()
        G_loss = -torch.mean(log(p_model) + log(1 - p_data))
        G_loss.backward()                                                # gibbsnet_pytorch.py:95
        G_solver.step()
        if not steps_between:
            D_solver.step()
        reset_grad()
        if it % 1 == 0:                                                  # the `it % 100 == 0` sampling block
            z = Variable(torch.randn(mb_size, z_dim))
            for _ in range(N):
                z_n = z.clone()
                X_hat = P(z_n)
                z = Q(X_hat)
            samples = X_hat.data.numpy()[:16]
    return made_here


try:
    run(1, steps_between=True)
except RuntimeError as e:
    print("as written, iteration 0:", str(e)[:80])
    assert "modified by an inplace operation" in str(e) and "second time" not in str(e)
made_here = run(5, steps_between=False)
print("with GS308's fix: 5 iterations ran; line 84 read this iteration's X_hat each time:", made_here)
assert all(made_here)
