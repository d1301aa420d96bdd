import numpy as np
import torch

init = np.random.default_rng(0).normal(size=(4, 4))
style = torch.from_numpy(init)
style = style.float().requires_grad_()
opt = torch.optim.Adam([style], lr=0.01)
