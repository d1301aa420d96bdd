import torch
import torch.nn.functional as F

torch.manual_seed(0)
xs = torch.tensor([0, 5, 13, 13, 1])
ys = torch.tensor([5, 13, 13, 1, 0])
W = torch.randn((27, 27), requires_grad=True)
xenc = F.one_hot(xs, num_classes=27).float()
logits = xenc @ W
counts = logits.exp()
probs = counts / counts.sum(1, keepdims=True)
loss = -probs[torch.arange(5), ys].log().mean() + 0.01 * (W ** 2).mean()  # root cause: built once, before the loop
for k in range(3):
    W.grad = None
    loss.backward()  # root cause: every iteration backwards the same, already freed graph
    W.data += -50 * W.grad
