"""fresh35 harmless: dougbrion/pytorch-classification-uncertainty test.py:109 (GS404).

`rotating_image_classification` (called once by main.py's `--examples` mode, after `model.eval()`, grad mode on)
appends `uncertainty.mean()` to `lu` for each of `Ndeg = int(180 / 10) + 1 = 19` rotations of one 28x28 digit. The
graphs are kept (true), but the list is local and bounded by 19 single-image forwards; it is freed when the call
returns. What goes wrong instead: matplotlib's `axs[2].plot(ldeg, lu, ...)` turns `lu` into an array, and numpy
conversion of a tensor that requires grad raises (shown here with np.asarray, which is what plot does with y data;
matplotlib itself is not installed here, so that step was not run).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 10)).eval()
num_classes, Mdeg = 10, 180
Ndeg = int(Mdeg / 10) + 1
lu = []
uncertainty = True
for i, deg in enumerate(np.linspace(0, Mdeg, Ndeg)):
    img_variable = torch.rand(1, 1, 28, 28)
    if uncertainty:
        output = model(img_variable)
        evidence = F.relu(output)
        alpha = evidence + 1
        uncertainty = num_classes / torch.sum(alpha, dim=1, keepdim=True)
        lu.append(uncertainty.mean())
assert len(lu) == 19 and all(t.requires_grad for t in lu)
try:
    np.asarray(lu)
except RuntimeError as e:
    print("plotting lu would raise:", str(e)[:80])
print("OK: 19 entries, one image each; the list dies with the call")
