import numpy as np
import torch
import torch.nn as nn


class SaliencyMap:
    def __init__(self, model):
        self.model = model
        self.model.eval()

    def __call__(self, image, target_class):
        x = torch.from_numpy(image).requires_grad_().float().unsqueeze(0)
        scores = self.model(x)
        scores[0, target_class].backward()
        saliency = x.grad.abs().amax(dim=1)
        return saliency[0]


torch.manual_seed(0)
cnn = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))
img = np.random.default_rng(0).random((3, 8, 8))
smap = SaliencyMap(cnn)(img, target_class=2)
