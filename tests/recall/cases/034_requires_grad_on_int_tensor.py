import torch

x = torch.tensor([1, 2, 3], requires_grad=True)  # root cause: integer dtype cannot require grad
with torch.enable_grad():
    y = x * 2
print(y.requires_grad)
