# Modelled on MorvanZhou/PyTorch-Tutorial, tutorial-contents/404_autoencoder.py (MIT License, Copyright (c) 2017 Morvan Zhou).
# Written anew for gradsight's trace tests after the shape of that example (not copied): random data instead of
# datasets, tiny sizes, a few steps, no plotting, so that it runs offline in about a second.
import torch
import torch.nn as nn

torch.manual_seed(1)


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 3))
        self.decoder = nn.Sequential(nn.Linear(3, 32), nn.Tanh(), nn.Linear(32, 64), nn.Sigmoid())

    def forward(self, x):
        encoded = self.encoder(x)
        decoded = self.decoder(encoded)
        return encoded, decoded


autoencoder = AutoEncoder()
optimizer = torch.optim.Adam(autoencoder.parameters(), lr=5e-3)
loss_func = nn.MSELoss()
images = torch.rand(48, 64)
for step in range(4):
    b_x = images[step * 12:(step + 1) * 12]
    b_y = images[step * 12:(step + 1) * 12]
    encoded, decoded = autoencoder(b_x)
    loss = loss_func(decoded, b_y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
codes = autoencoder(images[:5])[0].detach().numpy()
print("codes", codes.shape)
