import torch
import torch.nn as nn

torch.manual_seed(0)
backbone = nn.Linear(4, 8)
head = nn.Linear(8, 1)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
with torch.inference_mode():
    feats = backbone(torch.randn(5, 4))  # root cause: inference tensors cannot be saved for backward
pred = head(feats)
loss = pred.pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
