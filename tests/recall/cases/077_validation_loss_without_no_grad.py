import torch
import torch.nn as nn


def evaluate(model, val_loader, criterion):
    model.eval()
    val_loss = 0
    correct = 0
    for inputs, targets in val_loader:
        outputs = model(inputs)
        val_loss += criterion(outputs, targets)
        correct += (outputs.argmax(dim=1) == targets).sum().item()
    return val_loss / len(val_loader), correct


def train(model, train_loader, val_loader, epochs=2):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    history = []
    for epoch in range(epochs):
        model.train()
        for inputs, targets in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            optimizer.step()
        history.append(evaluate(model, val_loader, criterion))
    return history


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 3))
make = lambda n: [(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(n)]
hist = train(net, make(3), make(2))
