import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 3)
criterion = nn.CrossEntropyLoss(reduction="none")
x = torch.randn(5, 4)
label = torch.tensor([0, 2, 1, 1, 0])
loss = criterion(model(x), label)  # root cause: per-sample losses, shape [5]
loss.backward()  # root cause: backward() without gradient= needs a scalar
