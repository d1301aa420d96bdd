# expect: GS904 line 12 (loss.item() rebuilt as a new leaf: the model never gets gradients)
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 3)
y = torch.randn(8, 1)
for step in range(3):
    raw = nn.functional.mse_loss(model(x), y)
    loss = torch.tensor(raw.item(), requires_grad=True)
    opt.zero_grad()
    loss.backward()
    opt.step()
