import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
image = torch.randn(1, 8, requires_grad=True)
arr = np.clip(image.detach().numpy() * 2, 0, 255)
transformed = torch.from_numpy(arr).float()
model = nn.Linear(8, 2)
loss = F.mse_loss(model(transformed), torch.randn(1, 2))
loss.backward()
