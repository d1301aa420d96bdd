import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Linear(4, 4)
head = nn.Linear(4, 1)
feats = encoder(torch.randn(2, 4))
rebuilt = torch.from_numpy(feats.detach().numpy()).requires_grad_(True)
loss = head(rebuilt).pow(2).mean()
loss.backward()
