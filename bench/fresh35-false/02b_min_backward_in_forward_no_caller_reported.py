import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.fc = nn.Linear(4, 5)

    def forward(self, x, target=None, criterion=None):
        x = self.fc(x)
        if not self.args.random_sample and self.training:
            error_loss = criterion(x, target)
            error_loss.backward()
        return x


# Reported by the base engine with no caller in the file at all: the rule assumes one that backwards the output.
import types  # noqa: E402

net = Net(types.SimpleNamespace(random_sample=False)).train()
out = net(torch.randn(8, 4), torch.randint(0, 5, (8,)), nn.CrossEntropyLoss())
out.sum().item()     # using the output without a second backward is fine
print("OK")
