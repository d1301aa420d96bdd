import torch
import torch.nn.functional as F

x = torch.randn(10, requires_grad=True)
y = F.relu(x)
z = y.detach()
loss = z.sum()
loss.backward()
