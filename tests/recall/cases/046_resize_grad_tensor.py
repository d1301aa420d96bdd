import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 2)
scores = model(torch.randn(3, 4))
buffer = scores
offset = buffer.size(0)
buffer.resize_(offset + 3, 2)  # root cause: resize_ on a tensor that requires grad
