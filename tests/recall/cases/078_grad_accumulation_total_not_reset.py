import torch
import torch.nn as nn


def train(model, loader, optimizer, criterion, accum_steps=2):
    model.train()
    total_loss = 0
    optimizer.zero_grad()
    for step, (inputs, labels) in enumerate(loader):
        loss = criterion(model(inputs), labels) / accum_steps
        total_loss = total_loss + loss
        if (step + 1) % accum_steps == 0:
            total_loss.backward()
            optimizer.step()
            optimizer.zero_grad()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 2))
batches = [(torch.randn(3, 6), torch.randint(0, 2, (3,))) for _ in range(4)]
train(model, batches, torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss())
