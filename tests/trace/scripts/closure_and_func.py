# expect: nothing (LBFGS computes gradients inside step(closure); torch.func.grad refuses saved-tensor hooks)
import torch
import torch.nn as nn
from torch.func import grad

torch.manual_seed(0)
temperature = nn.Parameter(torch.ones(1) * 1.5)
logits = torch.randn(16, 4)
labels = torch.randint(0, 4, (16,))
optimizer = torch.optim.LBFGS([temperature], lr=0.01, max_iter=5)


def closure():
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(logits / temperature, labels)
    loss.backward()
    return loss


for _ in range(2):
    optimizer.step(closure)


def per_sample_loss(w, x, y):
    return ((x @ w - y) ** 2).mean()


g = grad(per_sample_loss)(torch.randn(3), torch.randn(5, 3), torch.randn(5))
print("grad shape", tuple(g.shape))
