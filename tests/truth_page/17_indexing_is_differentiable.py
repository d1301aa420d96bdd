import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
picked = x[[0, 2]]
picked.sum().backward()
