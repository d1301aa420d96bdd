"""fresh31 false shape, minimised with the base engine (b2197d5): REPORTED (GS402 at the loss line).

A name bound only inside the arms of an if/elif dispatch on the batch layout (`len(data) == 2` / `== 3`), no else,
not bound before the loop. The base engine reports the use after the chain as carrying the previous iteration's
graph. Running it: every backward runs (mixed 2- and 3-tuples). The same file with `else: raise` (02b) is quiet.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x_d, x_s=None):
        out = self.fc(x_d)
        return out, x_d


def train(loader):
    model = Model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_func = nn.MSELoss()
    for epoch in range(3):
        train_epoch(model, optimizer, loss_func, loader)


def train_epoch(model, optimizer, loss_func, loader):
    for data in loader:
        optimizer.zero_grad()
        if len(data) == 2:
            x, y = data
            predictions = model(x)[0]
        elif len(data) == 3:
            x_d, x_s, y = data
            predictions = model(x_d, x_s)[0]
        loss = loss_func(predictions, y)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = [(torch.rand(4, 3), torch.rand(4, 1)), (torch.rand(4, 3), torch.rand(4, 3), torch.rand(4, 1))] * 3
    train(loader)
    print("trained: every backward ran")
