import torch
import torch.nn as nn


class GANTrainer:
    def __init__(self, generator, discriminator, latent_dim=8, lr=2e-4):
        self.G = generator
        self.D = discriminator
        self.latent_dim = latent_dim
        self.criterion = nn.BCEWithLogitsLoss()
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=lr, betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=lr, betas=(0.5, 0.999))

    def train_step(self, real):
        batch = real.size(0)
        ones = torch.ones(batch, 1)
        zeros = torch.zeros(batch, 1)
        fake = self.G(torch.randn(batch, self.latent_dim))

        self.opt_d.zero_grad()
        d_loss = self.criterion(self.D(real), ones) + self.criterion(self.D(fake.detach()), zeros)
        d_loss.backward()
        self.opt_d.step()

        self.opt_g.zero_grad()
        g_loss = self.criterion(self.D(fake), ones)
        g_loss.backward()
        self.opt_g.step()
        return d_loss.item(), g_loss.item()


torch.manual_seed(0)
G = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
D = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
trainer = GANTrainer(G, D)
for real_batch in torch.randn(3, 5, 4):
    trainer.train_step(real_batch)
