# expect: GS908 line 12 (optimizer.step() before loss.backward(): the step has no gradients)
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(3):
    x = torch.randn(8, 4)
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    optimizer.step()
    loss.backward()
