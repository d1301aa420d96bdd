"""fresh23 false: zhykoties/TimeSeries train.py:81 (GS404).

gradsight: "`loss_epoch[i]` keeps a tensor with its graph each step, so memory grows every iteration."

What the code does: in `train`, per batch, `loss = torch.zeros(1, device=params.device)`, `loss += loss_fn(...)`
over the train window, `loss.backward()`, `optimizer.step()`, then line 80 rebinds
`loss = loss.item() / params.train_window` -- a Python float -- and line 81 stores it in
`loss_epoch = np.zeros(len(train_loader))`, a numpy array of float64 (which keeps no tensor at all: even a tensor
assigned into it would be converted to a number). Run below with the same statements; `params` is utils.Params,
a plain object whose attributes come from a JSON file (train_window is an int).

Minimised with the base engine (/tmp/w23/min/p.py..t.py): `loss = loss.item() / unknown.n` then
`loss_epoch[i] = loss` fires; `loss.item() / 4` is quiet; `v = loss.item() / unknown.n; loss_epoch[i] = v` is quiet.
So a rebinding of the same name to `<number> op <value the analysis cannot resolve>` keeps the name's earlier
"tensor with graph" facts.
"""
import types

import numpy as np
import torch
from torch import nn, optim

torch.manual_seed(0)
params = types.SimpleNamespace(train_window=4, device="cpu")      # utils.Params: attributes from params.json


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTMCell(3, 8)
        self.mu = nn.Linear(8, 1)

    def forward(self, x, h, c):
        h, c = self.lstm(x, (h, c))
        return self.mu(h).squeeze(1), h, c


model = Net()
optimizer = optim.Adam(model.parameters())
loss_fn = nn.MSELoss()
train_loader = [(torch.randn(params.train_window, 5, 3), torch.randn(params.train_window, 5)) for _ in range(6)]

loss_epoch = np.zeros(len(train_loader))                               # train.py:53
for i, (train_batch, labels_batch) in enumerate(train_loader):
    optimizer.zero_grad()
    loss = torch.zeros(1, device=params.device)                        # train.py:66
    h, c = torch.zeros(5, 8), torch.zeros(5, 8)
    for t in range(params.train_window):
        mu, h, c = model(train_batch[t], h, c)
        loss += loss_fn(mu, labels_batch[t])
    loss.backward()
    optimizer.step()
    loss = loss.item() / params.train_window                           # train.py:80
    assert type(loss) is float
    loss_epoch[i] = loss                                               # train.py:81
print("loss_epoch:", loss_epoch.round(3), "- plain floats in a numpy array, no graph kept")

# contrast: even a scalar tensor that requires grad is converted to a float64 by the numpy item assignment
import warnings
t = model(torch.randn(5, 3), torch.zeros(5, 8), torch.zeros(5, 8))[0].mean()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    loss_epoch[0] = t
assert isinstance(loss_epoch[0], np.float64)
print("contrast, tensor into the array: stored as", type(loss_epoch[0]).__name__)
