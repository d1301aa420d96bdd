"""fresh31 false shape, minimised with the base engine (b2197d5): QUIET. 02a with `else: raise ValueError(...)`
after the elif (also quiet: `predictions = None` before the loop, or `else:` instead of the elif).
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
        else:
            raise ValueError(len(data))
        loss = loss_func(predictions, y)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = [(torch.rand(4, 3), torch.rand(4, 1)), (torch.rand(4, 3), torch.rand(4, 3), torch.rand(4, 1))] * 3
    train(loader)
    print("trained: every backward ran")
