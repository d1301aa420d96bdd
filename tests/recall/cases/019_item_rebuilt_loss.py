import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 2)
criterion = nn.CrossEntropyLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(6, 4)
label = torch.tensor([0, 1, 1, 0, 1, 0])
output = model(x)
loss_value = criterion(output, label).item()
loss = torch.tensor(loss_value, requires_grad=True)  # root cause: a fresh leaf with no history
opt.zero_grad()
loss.backward()
opt.step()
