import torch
import torch.nn as nn


class AverageMeter:
    """Computes and stores the average and current value."""

    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train(train_loader, model, criterion, optimizer):
    losses = AverageMeter("Loss")
    model.train()
    for images, target in train_loader:
        output = model(images)
        loss = criterion(output, target)
        losses.update(loss.item(), images.size(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses


torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 4 * 4, 10))
loader = [(torch.randn(2, 3, 4, 4), torch.randint(0, 10, (2,))) for _ in range(4)]
meter = train(loader, model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
