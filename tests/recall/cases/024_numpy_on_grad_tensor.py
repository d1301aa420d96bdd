import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(2, 1)
xs = torch.linspace(-1, 1, 5).unsqueeze(1).repeat(1, 2)
pred = model(xs)
curve = pred.squeeze(1).numpy()  # root cause: numpy() on a tensor that requires grad
print(curve.max())
