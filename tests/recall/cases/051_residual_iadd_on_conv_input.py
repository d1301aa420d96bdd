import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualUnit(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_0 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn_0 = nn.BatchNorm2d(8)
        self.conv_1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn_1 = nn.BatchNorm2d(8)

    def forward(self, x):
        x = self.conv_0(x)
        x = self.bn_0(x)
        x = F.relu(x, inplace=True)
        residual = self.conv_1(x)
        residual = self.bn_1(residual)
        x += residual  # root cause: conv_1 saved x (its input) for the weight gradient
        return F.relu(x, inplace=True)


def train_step(model, opt, images):
    out = model(images)
    loss = out.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()


torch.manual_seed(0)
net = ResidualUnit()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
train_step(net, optimizer, torch.randn(2, 3, 8, 8))
