"""fresh29 false: autonomousvision/giraffe im2scene/eval.py:94 (GS201).

`calculate_activation_statistics(files, ...)` builds `model = InceptionV3([block_idx])` and hands it to
`get_activations`, whose tensor branch runs `pred = model(batch)[0]`, pools it and converts it:
`pred = pred.squeeze(3).squeeze(2).cpu().numpy()` (line 94). InceptionV3 (im2scene/inception.py, pytorch-fid's class)
takes `requires_grad=False` by default and ends `__init__` with `for param in self.parameters():
param.requires_grad = requires_grad`, so every weight is frozen; the images come from generators run under
`torch.no_grad()` (gan2d/training.py, giraffe/training.py) or from `torch.from_numpy` (eval.py). So `pred` has no
graph and `.numpy()` works. Run below with the constructor's freezing loop and the branch's real statements on a
small stand-in network (conv, pool), the input made as giraffe's trainers make it.
"""
import numpy as np
import torch
import torch.nn as nn
from torch.nn.functional import adaptive_avg_pool2d


class InceptionV3(nn.Module):
    def __init__(self, output_blocks=[3], resize_input=True, normalize_input=True, requires_grad=False,
                 use_fid_inception=True):
        super(InceptionV3, self).__init__()
        self.blocks = nn.ModuleList()
        self.blocks.append(nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(output_size=(2, 2))))
        for param in self.parameters():                                  # inception.py:128-129
            param.requires_grad = requires_grad

    def forward(self, inp):
        outp = []
        x = inp
        for block in self.blocks:
            x = block(x)
            outp.append(x)
        return outp


def get_activations(files, model, batch_size=50, dims=8, cuda=False, verbose=False):
    model.eval()
    pred_arr = np.empty((files.shape[0], dims))
    start_idx = 0
    for batch in torch.split(files, batch_size, dim=0):
        pred = model(batch)[0]
        if pred.size(2) != 1 or pred.size(3) != 1:
            pred = adaptive_avg_pool2d(pred, output_size=(1, 1))
        pred = pred.squeeze(3).squeeze(2).cpu().numpy()                 # line 94
        pred_arr[start_idx:start_idx + pred.shape[0]] = pred
        start_idx = start_idx + pred.shape[0]
    return pred_arr


gen = nn.Sequential(nn.Linear(4, 3 * 8 * 8), nn.Sigmoid())
x_fake = []
for i in range(3):
    with torch.no_grad():                                               # giraffe/training.py:99-100
        x_fake.append(gen(torch.randn(5, 4)).view(5, 3, 8, 8).cpu()[:, :3])
x_fake = torch.cat(x_fake, dim=0)
x_fake.clamp_(0., 1.)

model = InceptionV3([3])
assert not any(p.requires_grad for p in model.parameters())
act = get_activations(x_fake, model, batch_size=4)
print("activations:", act.shape, "finite:", bool(np.isfinite(act).all()))
assert act.shape == (15, 8)

try:
    get_activations(x_fake, InceptionV3([3], requires_grad=True), batch_size=4)
except RuntimeError as e:
    print("only requires_grad=True (never passed in the repository) raises:", str(e)[:60])
else:
    raise AssertionError("no raise with trainable weights")
