import torch
import torch.nn as nn


def focal_loss(logits, targets, gamma=2.0, eps=1e-6):
    probs = torch.sigmoid(logits)
    probs.clamp_(eps, 1.0 - eps)  # root cause: sigmoid saved probs (its output) for backward
    pt = torch.where(targets == 1, probs, 1 - probs)
    return (-(1 - pt) ** gamma * pt.log()).mean()


torch.manual_seed(0)
head = nn.Linear(10, 3)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
feats = torch.randn(6, 10)
labels = torch.randint(0, 2, (6, 3))
loss = focal_loss(head(feats), labels)
opt.zero_grad()
loss.backward()
opt.step()
