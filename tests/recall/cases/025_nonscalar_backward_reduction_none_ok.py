import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 3)
criterion = nn.CrossEntropyLoss(reduction="none")
x = torch.randn(5, 4)
label = torch.tensor([0, 2, 1, 1, 0])
loss = criterion(model(x), label)
weights = torch.tensor([1.0, 2.0, 1.0, 1.0, 0.5])
(loss * weights).mean().backward()
