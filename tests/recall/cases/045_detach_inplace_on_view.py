import torch
import torch.nn as nn

torch.manual_seed(0)
proj = nn.Linear(4, 4)
h = proj(torch.randn(3, 4))
context = h[:, :2]
context.detach_()  # root cause: views cannot be detached in place
loss = h.sum() + context.sum()
