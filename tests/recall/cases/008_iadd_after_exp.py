import torch

torch.manual_seed(0)
x = torch.randn(5, requires_grad=True)
scores = torch.exp(x)
scores += 1e-6  # root cause: in-place add on exp's output, which exp saved for backward
probs = scores / scores.sum()
loss = -torch.log(probs[0])
loss.backward()
