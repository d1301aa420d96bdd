import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
x = torch.randn(3)
pred = torch.sigmoid(w * x)
loss = (pred - 1.0).pow(2).sum()
loss.backward()
print("first grad", w.grad)
loss.backward()  # root cause: second backward through the graph freed on the line above
