import torch
import torch.nn as nn

torch.manual_seed(0)
emb = nn.Embedding(5, 3, padding_idx=None)
with torch.no_grad():
    emb.weight[0] = 0.0
tokens = torch.tensor([[0, 1, 2]])
loss = emb(tokens).sum()
loss.backward()
