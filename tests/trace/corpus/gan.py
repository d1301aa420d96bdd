# Modelled on MorvanZhou/PyTorch-Tutorial, tutorial-contents/406_GAN.py (MIT License, Copyright (c) 2017 Morvan Zhou).
# Written anew for gradsight's trace tests after the shape of that example (not copied): random data instead of
# datasets, tiny sizes, a few steps, no plotting, so that it runs offline in about a second.
import torch
import torch.nn as nn

torch.manual_seed(1)
BATCH_SIZE = 16
N_IDEAS = 5
ART_COMPONENTS = 15
PAINT_POINTS = torch.linspace(-1, 1, ART_COMPONENTS).repeat(BATCH_SIZE, 1)


def artist_works():
    a = torch.rand(BATCH_SIZE, 1) + 1
    return a * PAINT_POINTS.pow(2) + (a - 1)


G = nn.Sequential(nn.Linear(N_IDEAS, 32), nn.ReLU(), nn.Linear(32, ART_COMPONENTS))
D = nn.Sequential(nn.Linear(ART_COMPONENTS, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())
opt_D = torch.optim.Adam(D.parameters(), lr=1e-4)
opt_G = torch.optim.Adam(G.parameters(), lr=1e-4)
for step in range(4):
    artist_paintings = artist_works()
    G_ideas = torch.randn(BATCH_SIZE, N_IDEAS)
    G_paintings = G(G_ideas)
    prob_artist1 = D(G_paintings)
    G_loss = torch.mean(torch.log(1. - prob_artist1))
    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()

    prob_artist0 = D(artist_paintings)
    prob_artist1 = D(G_paintings.detach())
    D_loss = -torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
    opt_D.zero_grad()
    D_loss.backward()
    opt_D.step()
print("D score %.3f" % -D_loss.item())
