import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(3, 1)
initial = model.weight.detach().clone()
x = torch.randn(8, 3)
y = torch.randn(8, 1)
lr = 0.1
for epoch in range(3):
    loss = F.mse_loss(model(x), y)
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= lr * param.grad
