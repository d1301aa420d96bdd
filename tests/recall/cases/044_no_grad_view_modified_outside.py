import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Linear(4, 4)
x = encoder(torch.randn(2, 4))
with torch.no_grad():
    first = x[:, 0]  # root cause: view created under no_grad
first.mul_(0.5)  # root cause: ...modified in place with grad mode back on
x.sum().backward()
