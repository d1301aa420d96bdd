# From yukimasano/self-label eval_resnet.py:119 (fresh7, first try at d79ed50).
# Finding: GS401 "This runs with grad mode disabled, so `loss.backward()` at line 127 raises."
# Why wrong: the backward is under `if is_validation is False:`, and the only calls made under
# `torch.no_grad()` pass `is_validation=True`; the training call (grad mode on) passes False. No call under
# no_grad reaches the backward (this program runs both calls and trains).
import torch
import torch.nn as nn


class Trainer:
    def optimize(self, model, criterion, optimizer, loader):
        for epoch in range(2):
            self.optimize_epoch(model, criterion, optimizer, loader, epoch, is_validation=False)
            with torch.no_grad():
                self.optimize_epoch(model, criterion, optimizer, loader, epoch, is_validation=True)

    def optimize_epoch(self, model, criterion, optimizer, loader, epoch, is_validation=False):
        if is_validation is False:
            model.train()
        else:
            model.eval()
        for input, label in loader:
            predictions = model(input)
            loss = criterion(predictions, label)
            if is_validation is False:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


model = nn.Linear(4, 3)
loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]
Trainer().optimize(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1), loader)
print("ok")
