import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.5)  # root cause: captures the old head's parameters
model[2] = nn.Linear(8, 3)  # root cause: the new head is unknown to the optimizer
head_before = model[2].weight.detach().clone()
x = torch.randn(6, 4)
labels = torch.tensor([0, 1, 2, 0, 1, 2])
loss = F.cross_entropy(model(x), labels)
opt.zero_grad()
loss.backward()
opt.step()
