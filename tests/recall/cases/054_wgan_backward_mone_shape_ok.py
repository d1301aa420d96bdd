import torch
import torch.nn as nn

torch.manual_seed(0)
netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-4, betas=(0.5, 0.9))
one = torch.tensor(1.0)
mone = one * -1


def train_critic(real):
    netD.zero_grad()
    D_real = netD(real)
    D_real = D_real.mean()
    D_real.backward(mone)
    noise = torch.randn(real.size(0), 4)
    fake = netG(noise).detach()
    D_fake = netD(fake).mean()
    D_fake.backward(one)
    optimizerD.step()


for it in range(2):
    train_critic(torch.randn(5, 8))
