"""Reproduction for `robosat_validate_without_no_grad`: mapbox/robosat 6dcdc0e (added torch.no_grad() to avoid out of memory during validation).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import gc
import weakref

import torch

torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 2, 1))
criterion = torch.nn.CrossEntropyLoss()
probe = []
net[1].register_forward_hook(lambda m, i, o: probe.append(weakref.ref(o)))   # the ReLU output, saved for backward


def validate(loader):
    running_loss = 0
    net.eval()
    for images, masks in loader:
        outputs = net(images)
        loss = criterion(outputs, masks)
        running_loss += loss.item()
        gc.collect()
        alive = sum(r() is not None for r in probe)      # activations held while the next batch runs
    return running_loss, alive, outputs.requires_grad


loader = [(torch.randn(2, 3, 8, 8), torch.randint(0, 2, (2, 8, 8))) for _ in range(3)]
probe.clear()
_, alive, req = validate(loader)
assert req and alive >= 1                  # grad mode: the graph keeps the activations
probe.clear()
with torch.no_grad():
    _, alive, req = validate(loader)
assert not req and alive == 0
print("CONFIRMED")
