import torch

torch.manual_seed(0)
x = torch.randn(5, requires_grad=True)
scores = torch.exp(x)
scores = scores + 1e-6
probs = scores / scores.sum()
loss = -torch.log(probs[0])
loss.backward()
