# expect: GS901 line 6 (nn.ReLU(inplace=True), applied at line 9, overwrites the output sigmoid saved at line 8)
import torch
import torch.nn as nn

torch.manual_seed(0)
act = nn.ReLU(inplace=True)
x = torch.randn(4, 3, requires_grad=True)
h = torch.sigmoid(x)
h = act(h)
h.sum().backward()
