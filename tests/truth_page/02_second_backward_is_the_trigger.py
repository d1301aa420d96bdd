import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
loss = model(torch.randn(3, 4)).pow(2).mean()
loss.backward()
loss.backward()
