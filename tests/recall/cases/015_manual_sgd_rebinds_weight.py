import torch

X = torch.tensor([1.0, 2.0, 3.0, 4.0])
Y = torch.tensor([2.0, 4.0, 6.0, 8.0])
w = torch.tensor(0.0, requires_grad=True)
lr = 0.01
for epoch in range(3):
    y_pred = w * X
    loss = ((y_pred - Y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w = w - lr * w.grad  # root cause: rebinds w to a new tensor that does not require grad
    w.grad.zero_()
