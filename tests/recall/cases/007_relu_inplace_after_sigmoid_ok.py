import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(4, 3, requires_grad=True)
act = nn.ReLU(inplace=True)
fc = nn.Linear(3, 3)
gate = fc(x)
out = act(gate)
out.sum().backward()
