import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = torch.sigmoid(x)
y.data.mul_(2.0)  # root cause: mutation through .data skips the version check
y.sum().backward()
expected = torch.sigmoid(x.detach()) * (1 - torch.sigmoid(x.detach()))
