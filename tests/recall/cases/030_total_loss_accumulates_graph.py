import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
criterion = nn.MSELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
total_loss = 0
for i in range(5):
    opt.zero_grad()
    output = model(torch.randn(8, 4))
    loss = criterion(output, torch.randn(8, 1))
    loss.backward()
    opt.step()
    total_loss += loss  # root cause: keeps every iteration's graph alive
print(total_loss / 5)
