"""fresh18 (false): GS402 rtqichen/torchdiffeq `examples/latent_ode.py:257` (two findings, one per subscript of `out`).

The training loop runs a recognition RNN backward in time over the observations, then reads its last output:

    for itr in range(1, args.niters + 1):
        optimizer.zero_grad()
        h = rec.initHidden().to(device)
        for t in reversed(range(samp_trajs.size(1))):
            obs = samp_trajs[:, t, :]
            out, h = rec.forward(obs, h)
        qz0_mean, qz0_logvar = out[:, :latent_dim], out[:, latent_dim:]
        ...
        loss.backward()

`out` is bound only inside the inner loop, so the inner loop must run in the first iteration (else NameError), and its
iterable `range(samp_trajs.size(1))` is the same in every iteration (`samp_trajs` is not rebound in the outer loop):
`out` is the current iteration's output every time; no graph crosses iterations. Runs cleanly.
"""
import torch
import torch.nn as nn


class RecognitionRNN(nn.Module):
    def __init__(self, latent_dim=4, obs_dim=2, nhidden=25, nbatch=1):
        super().__init__()
        self.nhidden, self.nbatch = nhidden, nbatch
        self.i2h = nn.Linear(obs_dim + nhidden, nhidden)
        self.h2o = nn.Linear(nhidden, latent_dim * 2)

    def forward(self, x, h):
        h = torch.tanh(self.i2h(torch.cat((x, h), dim=1)))
        return self.h2o(h), h

    def initHidden(self):
        return torch.zeros(self.nbatch, self.nhidden)


latent_dim, nspiral = 4, 8
samp_trajs = torch.randn(nspiral, 10, 2)
rec = RecognitionRNN(latent_dim, 2, 25, nspiral)
optimizer = torch.optim.Adam(rec.parameters(), lr=0.01)
for itr in range(1, 6):
    optimizer.zero_grad()
    h = rec.initHidden()
    for t in reversed(range(samp_trajs.size(1))):
        obs = samp_trajs[:, t, :]
        out, h = rec.forward(obs, h)
    qz0_mean, qz0_logvar = out[:, :latent_dim], out[:, latent_dim:]
    z0 = torch.randn(qz0_mean.size()) * torch.exp(.5 * qz0_logvar) + qz0_mean
    loss = z0.pow(2).mean() + qz0_logvar.pow(2).mean()
    loss.backward()
    optimizer.step()
print("5 iterations, no error; last loss", round(loss.item(), 4))
