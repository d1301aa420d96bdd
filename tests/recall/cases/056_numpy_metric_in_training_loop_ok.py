import numpy as np
import torch
import torch.nn as nn


def rmse(y_pred, y_true):
    return float(np.sqrt(np.mean((y_pred.detach().numpy() - y_true.numpy()) ** 2)))


def fit(model, optimizer, batches):
    criterion = nn.MSELoss()
    scores = []
    for x, y in batches:
        pred = model(x)
        loss = criterion(pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scores.append(rmse(pred, y))
    return scores


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
fit(net, torch.optim.SGD(net.parameters(), lr=0.01), [(torch.randn(4, 5), torch.randn(4, 1))])
