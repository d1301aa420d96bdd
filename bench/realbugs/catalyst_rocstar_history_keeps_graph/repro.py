"""Reproduction for `catalyst_rocstar_history_keeps_graph`: catalyst-team/catalyst commit a84da9dbf ("Fix bug from issue").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `RocStarLoss.forward` stores `torch.cat((self.outputs_history[batch_size:], outputs))` on the module, so
the next batch's loss is built on the previous batch's (already freed) graph and `backward()` raises
"Trying to backward through the graph a second time"; the fix stores `outputs.clone().detach()`.
"""

import torch

torch.manual_seed(0)
model = torch.nn.Linear(4, 1)


class History:
    def __init__(self, fixed):
        self.fixed = fixed
        self.outputs_history = torch.rand((10, 1))

    def loss(self, outputs):
        hist = self.outputs_history[-10:]
        loss = torch.relu((hist.view(1, -1) + 0.1 - outputs.view(-1, 1)) ** 2).mean()
        new = outputs.clone().detach() if self.fixed else outputs   # the fix
        self.outputs_history = torch.cat((self.outputs_history[outputs.size(0):], new))
        return loss


def train(fixed):
    h = History(fixed)
    for _ in range(3):
        outputs = torch.sigmoid(model(torch.randn(4, 4)))
        h.loss(outputs).backward()


try:
    train(False)
    raise AssertionError("expected an error")
except RuntimeError as e:
    assert "backward through the graph a second time" in str(e), e
train(True)
print("CONFIRMED")
