import torch
import torch.nn as nn

torch.manual_seed(0)
linear = nn.Linear(1, 1)
intermediate = linear(torch.tensor([[2.0]]))
output = intermediate * 2.0
loss = nn.MSELoss()(output, torch.tensor([[5.0]]))
loss.backward()
