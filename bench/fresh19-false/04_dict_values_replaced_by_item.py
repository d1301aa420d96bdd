"""fresh19 (false): GS404 WenmuZhou/DBNet.pytorch `trainer/trainer.py:81`.

    loss_dict = self.criterion(preds, batch)
    self.optimizer.zero_grad(); loss_dict['loss'].backward(); self.optimizer.step()
    ...
    for idx, (key, value) in enumerate(loss_dict.items()):
        loss_dict[key] = value.item()
        ...
    train_loss += loss_dict['loss']            # line 81

The loop over `loss_dict.items()` replaces every entry, `'loss'` included, by its Python float before line 81, so
`train_loss` sums floats and keeps no graph. Runs: asserts `train_loss` is a float.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
train_loss = 0.
for i in range(3):
    pred = model(torch.randn(4, 3))
    loss_dict = {'loss': (pred ** 2).mean(), 'loss_shrink': pred.abs().mean()}
    opt.zero_grad()
    loss_dict['loss'].backward()
    opt.step()
    loss_str = 'loss: {:.4f}, '.format(loss_dict['loss'].item())
    for idx, (key, value) in enumerate(loss_dict.items()):
        loss_dict[key] = value.item()
    train_loss += loss_dict['loss']
assert isinstance(train_loss, float), type(train_loss)
print("train_loss is a float:", train_loss)
