import torch
import torch.nn as nn


def train_one_epoch(model, loader, optimizer, criterion):
    model.train()
    running_loss = 0.0
    for i, (images, labels) in enumerate(loader):
        optimizer.zero_grad()
        outputs = model(images)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    return running_loss / len(loader)


torch.manual_seed(0)
cnn = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
batches = [(torch.randn(2, 1, 8, 8), torch.randint(0, 3, (2,))) for _ in range(3)]
epoch_loss = train_one_epoch(cnn, batches, torch.optim.SGD(cnn.parameters(), lr=0.01), nn.CrossEntropyLoss())
