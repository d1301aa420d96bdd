import torch

num_classes, ipc = 2, 3
image_syn = (torch.randn(num_classes * ipc, 1, 4, 4) * 0.01).requires_grad_(True)
opt_img = torch.optim.SGD([image_syn], lr=0.1, momentum=0.5)
