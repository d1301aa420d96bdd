import numpy as np
import torch

init = np.random.default_rng(0).normal(size=(4, 4))
style = torch.from_numpy(init).requires_grad_()
style = style.float()  # root cause: like .cuda() after requires_grad, the cast makes a non-leaf
opt = torch.optim.Adam([style], lr=0.01)
