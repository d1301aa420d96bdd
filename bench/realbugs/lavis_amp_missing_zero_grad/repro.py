"""Reproduction for `lavis_amp_missing_zero_grad`: salesforce/LAVIS b7198ad (fix optimizer zero_grad under amp).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


class Scaler:                      # the CPU stand-in for torch.cuda.amp.GradScaler with scale 1
    def scale(self, loss): return loss
    def step(self, opt): opt.step()
    def update(self): pass


def run(fixed, use_amp=True):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    scaler = Scaler()
    for i in range(3):
        loss = model(torch.randn(4, 3)).pow(2).mean()
        if use_amp:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if use_amp:
            scaler.step(optimizer)
            scaler.update()
            if fixed:
                optimizer.zero_grad()
        else:
            optimizer.step()
            optimizer.zero_grad()
    return model.weight.grad


assert run(False) is not None and run(False).abs().sum() > 0     # grads of all three steps are still there
g = run(True)
assert g is None or g.abs().sum() == 0
assert run(False, use_amp=False) is None or run(False, use_amp=False).abs().sum() == 0
print("CONFIRMED")
