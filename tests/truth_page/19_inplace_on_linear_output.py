import torch
import torch.nn as nn

torch.manual_seed(0)
linear = nn.Linear(1, 1)
x = torch.tensor([[2.0]])
intermediate = linear(x)
intermediate *= 2.0
loss = nn.MSELoss()(intermediate, torch.tensor([[5.0]]))
loss.backward()
expected = 2 * (2.0 * linear(x).detach() - 5.0) * 2.0 * x
