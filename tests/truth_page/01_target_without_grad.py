import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(4, 2)
target = torch.randn(3, 2)
output = model(torch.randn(3, 4))
loss = F.mse_loss(output, target)
loss.backward()
