# fresh12 false shape 1 (GS201, ctallec/world-models utils/misc.py:162): a method that converts a module's output to
# NumPy, called only by another method of the class (`rollout`), which every caller runs under `torch.no_grad()`
# (traincontroller.py:92, test_controller.py:20). The output never requires grad, so `.numpy()` runs; gradsight
# starts `rollout` with grad mode unknown (it is called under no_grad) but analysed `act` with grad mode on.
import torch
import torch.nn as nn


class Generator:
    def __init__(self):
        self.controller = nn.Linear(4, 2)

    def act(self, obs):
        action = self.controller(obs)
        return action.squeeze().cpu().numpy()

    def rollout(self, steps):
        total = 0.0
        for _ in range(steps):
            total += float(self.act(torch.randn(1, 4)).sum())
        return total


gen = Generator()
with torch.no_grad():
    print(gen.rollout(3))
