import torch


def fit_line(x, y, w, b, lr=0.05, epochs=3):
    for epoch in range(epochs):
        y_hat = w * x + b
        loss = ((y_hat - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
    return w, b


xs = torch.linspace(0, 1, 10)
ys = 3 * xs + 1
weight = torch.zeros(1, requires_grad=True)
bias = torch.zeros(1, requires_grad=True)
fit_line(xs, ys, weight, bias)
