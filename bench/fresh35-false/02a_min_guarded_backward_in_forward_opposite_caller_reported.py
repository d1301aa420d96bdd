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


def train(args, loader):
    model = Net(args)
    criterion = nn.CrossEntropyLoss()
    for input_var, target_var in loader:
        output = model(input_var, target_var, criterion)
        loss = criterion(output, target_var)
        if args.random_sample:
            loss.backward()


# Reported by the base engine (f0cf961) at the `error_loss.backward()` line; runs under torch for both flag values.
import types  # noqa: E402

for rs in (False, True):
    data = [(torch.randn(8, 4), torch.randint(0, 5, (8,))) for _ in range(2)]
    train(types.SimpleNamespace(random_sample=rs), data)
print("OK")
