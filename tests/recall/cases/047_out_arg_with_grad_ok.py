import torch

torch.manual_seed(0)
logits = torch.randn(3, requires_grad=True)
buf = torch.empty(3)
with torch.no_grad():
    torch.exp(logits, out=buf)
probs = buf / buf.sum()
