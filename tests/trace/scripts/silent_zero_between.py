# expect: GS908 line 12 (zero_grad() between backward() and step() clears the gradients)
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
for i in range(3):
    x = torch.randn(8, 4)
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
