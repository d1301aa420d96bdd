import torch


class LinearRegression:
    def __init__(self, n_features, lr=0.05):
        self.w = torch.zeros(n_features, 1, requires_grad=True)
        self.b = torch.zeros(1, requires_grad=True)
        self.lr = lr

    def predict(self, X):
        return X @ self.w + self.b

    def fit(self, X, y, epochs=20):
        for _ in range(epochs):
            loss = ((self.predict(X) - y) ** 2).mean()
            loss.backward()
            self.w -= self.lr * self.w.grad
            self.b -= self.lr * self.b.grad
            self.w.grad.zero_()
            self.b.grad.zero_()
        return self


torch.manual_seed(0)
X = torch.randn(32, 3)
y = X @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
reg = LinearRegression(3).fit(X, y)
