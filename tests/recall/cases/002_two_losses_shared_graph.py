import torch
import torch.nn as nn

torch.manual_seed(0)
trunk = nn.Linear(4, 8)
head_a = nn.Linear(8, 1)
head_b = nn.Linear(8, 1)
x = torch.randn(5, 4)
h = torch.tanh(trunk(x))
loss_a = head_a(h).pow(2).mean()
loss_b = head_b(h).abs().mean()
loss_a.backward()  # root cause: frees the shared trunk/tanh graph
loss_b.backward()  # root cause: needs the freed tanh output
