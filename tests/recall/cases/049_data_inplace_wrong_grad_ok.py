import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = torch.sigmoid(x)
scaled = y.detach() * 2.0
y.sum().backward()
expected = torch.sigmoid(x.detach()) * (1 - torch.sigmoid(x.detach()))
