# expect: GS909 line 11 (gradients are never reset, so they accumulate across steps)
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for i in range(3):
    x = torch.randn(8, 4)
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
