import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 3)
counts = torch.randint(0, 5, (8, 1)).float()
pred = model(x) * 4.0
loss = F.mse_loss(pred, counts)
opt.zero_grad()
loss.backward()
opt.step()
rounded = torch.round(pred.detach())
