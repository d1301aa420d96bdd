import torch

device = torch.device("cpu")
w = torch.randn(3, 1, requires_grad=True).to(device, torch.float64)  # root cause: .to() result is not a leaf
b = torch.zeros(1, dtype=torch.float64, device=device, requires_grad=True)
opt = torch.optim.SGD([w, b], lr=0.1)
