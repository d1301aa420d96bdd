import torch

device = torch.device("cpu")
w = torch.randn(3, 1).to(device, torch.float64).requires_grad_()
b = torch.zeros(1, dtype=torch.float64, device=device, requires_grad=True)
opt = torch.optim.SGD([w, b], lr=0.1)
