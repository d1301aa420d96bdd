import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, optimizer, criterion):
        self.model = model
        self.optimizer = optimizer
        self.criterion = criterion
        self.running_loss = 0.0
        self.steps = 0

    def train_step(self, inputs, targets):
        self.model.train()
        self.optimizer.zero_grad()
        outputs = self.model(inputs)
        loss = self.criterion(outputs, targets)
        loss.backward()
        self.optimizer.step()
        self.running_loss += loss.item()
        self.steps += 1

    def fit(self, loader, epochs=1):
        for _ in range(epochs):
            for inputs, targets in loader:
                self.train_step(inputs, targets)
        return self.running_loss / max(self.steps, 1)


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
trainer = Trainer(net, torch.optim.SGD(net.parameters(), lr=0.05), nn.CrossEntropyLoss())
loader = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(5)]
mean_loss = trainer.fit(loader, epochs=2)
