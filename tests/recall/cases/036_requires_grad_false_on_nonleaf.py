import torch
import torch.nn as nn

torch.manual_seed(0)
backbone = nn.Linear(4, 4)
head = nn.Linear(4, 2)
feat = backbone(torch.randn(3, 4))
feat.requires_grad = False  # root cause: cannot freeze a computed tensor this way
loss = head(feat).sum()
loss.backward()
