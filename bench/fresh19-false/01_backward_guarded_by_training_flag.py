"""fresh19 (false): GS401 McGregorWwww/UCTransNet `Train_one_epoch.py:76`, GS109 `train_model.py:142`, and GS301
`utils.py:67`.

One function serves the training and the validation pass:

    def train_one_epoch(loader, model, criterion, optimizer, ...):
        for ...:
            preds = model(images)                    # ends in nn.Sigmoid (saves its output)
            out_loss = criterion(preds, masks.float())
            if model.training:
                optimizer.zero_grad(); out_loss.backward(); optimizer.step()
            train_dice = criterion._show_dice(preds, masks.float())   # writes preds in place
            ...

    model.train(True); train_one_epoch(train_loader, model, ...)
    with torch.no_grad():
        model.eval()
        val_loss, val_dice = train_one_epoch(val_loader, model, ...)

GS401/GS109: the backward runs only when `model.training`; the only call under `no_grad` sets `model.eval()` first in
the same block, so no backward runs without grad mode. GS301: `_show_dice`'s in-place writes into the Sigmoid's
output come after the only backward through that graph on every path (line 76 before line 85), and under no_grad in
validation nothing is saved. Runs cleanly: one training and one validation pass.
"""
import torch
import torch.nn as nn


class Criterion(nn.Module):
    def _show_dice(self, inputs, targets):
        inputs[inputs >= 0.5] = 1
        inputs[inputs < 0.5] = 0
        return 1.0 - ((inputs * targets).sum() * 2 + 1e-5) / ((inputs * inputs).sum() + (targets * targets).sum() + 1e-5)

    def forward(self, inputs, targets):
        return nn.functional.binary_cross_entropy(inputs, targets)


def train_one_epoch(loader, model, criterion, optimizer):
    for images, masks in loader:
        preds = model(images)
        out_loss = criterion(preds, masks.float())
        if model.training:
            optimizer.zero_grad()
            out_loss.backward()
            optimizer.step()
        train_dice = criterion._show_dice(preds, masks.float())
    return out_loss.item(), train_dice.item()


torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 1), nn.Sigmoid())
criterion, opt = Criterion(), torch.optim.Adam(model.parameters())
loader = [(torch.randn(2, 1, 8, 8), (torch.rand(2, 1, 8, 8) > 0.5).float()) for _ in range(3)]
model.train(True)
print("train:", train_one_epoch(loader, model, criterion, opt))
with torch.no_grad():
    model.eval()
    print("val:", train_one_epoch(loader, model, criterion, opt))
