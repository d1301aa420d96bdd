import torch

torch.manual_seed(0)
logits = torch.randn(3, requires_grad=True)
buf = torch.empty(3)
torch.exp(logits, out=buf)  # root cause: out= does not support autograd
probs = buf / buf.sum()
