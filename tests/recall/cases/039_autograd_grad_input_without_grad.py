import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
img = torch.rand(1, 4)  # root cause: the input never asked for a gradient
score = model(img)[0, 1]
(saliency,) = torch.autograd.grad(score, img)
