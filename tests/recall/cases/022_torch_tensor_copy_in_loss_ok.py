import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(5, 4)
y = torch.randn(5, 1)
pred = model(x)
loss = torch.as_tensor(((pred - y) ** 2).mean())
opt.zero_grad()
loss.backward()
opt.step()
