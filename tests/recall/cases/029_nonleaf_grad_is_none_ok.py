import torch

torch.manual_seed(0)
x = torch.randn(6, 3)
y = torch.randn(6)
w = (torch.randn(3) * 0.1).requires_grad_()
lr = 0.5
for step in range(2):
    loss = ((x @ w) - y).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
    w.grad = None
