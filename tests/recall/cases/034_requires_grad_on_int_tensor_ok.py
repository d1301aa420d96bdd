import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
with torch.enable_grad():
    y = x * 2
print(y.requires_grad)
