import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
x = torch.randn(4, 3)
target = torch.randn(4)
pred = model(x).squeeze(1)
scores = pred.tolist()
loss = (pred - target).pow(2).mean()
loss.backward()
