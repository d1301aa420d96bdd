import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(4, 3, requires_grad=True)
act = nn.ReLU(inplace=True)
gate = torch.sigmoid(x)
out = act(gate)  # root cause: in-place ReLU overwrites the sigmoid output that sigmoid saved
out.sum().backward()
