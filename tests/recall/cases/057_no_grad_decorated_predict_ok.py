import torch
import torch.nn as nn
import torch.nn.functional as F


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.body(x)

    @torch.no_grad()
    def predict(self, x):
        return self.forward(x)


def train_epoch(model, optimizer, batches):
    for x, y in batches:
        pred = model(x)
        loss = F.mse_loss(pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
reg = Regressor()
train_epoch(reg, torch.optim.Adam(reg.parameters()), [(torch.randn(3, 6), torch.randn(3, 1))])
