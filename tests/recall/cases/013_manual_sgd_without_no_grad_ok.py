import torch

torch.manual_seed(0)
x = torch.randn(8, 3)
y = torch.randn(8)
w = torch.randn(3, requires_grad=True)
lr = 0.1
for epoch in range(2):
    loss = ((x @ w) - y).pow(2).mean() + 1e-3 * (w ** 2).sum()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
    w.grad.zero_()
