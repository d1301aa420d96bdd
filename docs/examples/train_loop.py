"""A small regression training loop with two autograd mistakes gradsight finds.

Running it: the loop trains, but `total_loss += loss` keeps every step's graph alive (GS404), and the
plotting line raises "Can't call numpy() on Tensor that requires grad" (GS201).
"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(inplace=True), nn.Linear(32, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
criterion = nn.MSELoss()

total_loss = 0
for step in range(20):
    x = torch.randn(64, 8)
    y = x.sum(dim=1, keepdim=True)
    pred = model(x)
    loss = criterion(pred, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    total_loss += loss

print(f"mean loss {total_loss / 20}")
counts, edges = np.histogram(pred.numpy(), bins=10)
