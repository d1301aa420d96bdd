"""Reproduction for `genrl_bayesian_bandit_backward_twice`: SforAiDl/genrl 7e0211a (fixed minor bug).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


class Model(torch.nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.fixed = fixed
        self.net = torch.nn.Linear(3, 2)
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.01)

    def _compute_loss(self, x, y):          # BayesianNNBanditModel._compute_loss
        loss = (self.net(x) - y).pow(2).mean()
        if not self.fixed:
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return loss

    def train_model(self, epochs=2):        # Model.train_model (base class)
        for _ in range(epochs):
            loss = self._compute_loss(torch.randn(4, 3), torch.randn(4, 2))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


try:
    Model(False).train_model()
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "second time" in str(e), e
Model(True).train_model()
print("CONFIRMED")
