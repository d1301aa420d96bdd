"""A correct loop full of things that look risky; gradsight stays quiet on all of it."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(inplace=True), nn.Linear(16, 1))
with torch.no_grad():
    for p in model.parameters():
        p.mul_(0.5)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
running = 0.0
for step in range(10):
    x, y = torch.randn(32, 4), torch.randn(32, 1)
    out = model(x)
    out += 0.1
    loss = nn.functional.mse_loss(out, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    running += loss.item()
model.eval()
with torch.no_grad():
    preview = model(torch.randn(4, 4)).numpy()
print(running / 10, preview.shape)
