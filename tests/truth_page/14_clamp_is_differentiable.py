import torch

x = torch.tensor([-0.5, 0.3, 0.7, 1.5], requires_grad=True)
clipped = torch.clamp(x, 0.0, 1.0)
clipped.sum().backward()
