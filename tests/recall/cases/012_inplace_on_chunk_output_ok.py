import torch
import torch.nn as nn

torch.manual_seed(0)
proj = nn.Linear(4, 12)
x = torch.randn(2, 4)
qkv = proj(x)
q, k, v = qkv.chunk(3, dim=-1)
q = q * 0.5
attn = (q * k).sum(-1, keepdim=True) * v
attn.sum().backward()
