import torch
import torch.nn as nn
from collections import defaultdict


def fit(model, optimizer, criterion, batches, history):
    model.train()
    for inputs, targets in batches:
        loss = criterion(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history["train_loss"].append(loss.item())
    return history


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 2))
data = [(torch.randn(5, 6), torch.randint(0, 2, (5,))) for _ in range(4)]
hist = fit(net, torch.optim.SGD(net.parameters(), lr=0.1), nn.CrossEntropyLoss(), data, defaultdict(list))
