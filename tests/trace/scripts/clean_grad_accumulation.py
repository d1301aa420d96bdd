# expect: nothing (deliberate gradient accumulation over micro-batches, manual and set_to_none=False resets)
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
other = torch.optim.SGD(model.parameters(), lr=0.01)
for i in range(4):
    loss = model(torch.randn(8, 4)).pow(2).mean() / 2
    loss.backward()
    if i % 2 == 1:
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
for i in range(3):
    for p in model.parameters():
        if p.grad is not None:
            p.grad.zero_()
    model(torch.randn(8, 4)).pow(2).mean().backward()
    other.step()
