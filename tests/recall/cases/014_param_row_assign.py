import torch
import torch.nn as nn

torch.manual_seed(0)
emb = nn.Embedding(5, 3, padding_idx=None)
emb.weight[0] = 0.0  # root cause: writes into a view of a parameter (a leaf) with grad mode on
tokens = torch.tensor([[0, 1, 2]])
loss = emb(tokens).sum()
loss.backward()
