import torch
import torch.nn as nn

torch.manual_seed(0)
proj = nn.Linear(6, 6)
feats = torch.randn(3, 6)
att = torch.sigmoid(proj(feats))
att = att.masked_fill(att < 0.3, 0.0)
out = (att * feats).sum()
out.backward()
