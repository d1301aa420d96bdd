"""Reproduction for `dctr_reg_loss_built_at_init`: shenweichen/DeepCTR-Torch commit 6f1589f9 ("v0.2.2 (#111)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `add_regularization_loss` computes `torch.norm(w)` of the weights once, in `__init__`, and stores the result in
`self.reg_loss`; every training step adds that same stale tensor to the loss and back-propagates through the graph
built at init (kept by retain_graph=True). After the first `optim.step()` updates the weights in place, the saved
weights are at a newer version and backward raises "modified by an inplace operation" (issues #88/#90).
The fix stores the weight list and recomputes the norm each step in `get_regularization_loss()`.
"""

import torch

torch.manual_seed(0)


class Model(torch.nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.fixed = fixed
        self.emb = torch.nn.Embedding(10, 4)
        self.out = torch.nn.Linear(4, 1)
        self.reg_loss = torch.zeros((1,))
        if fixed:
            self.regularization_weight = [(list(self.emb.parameters()), 1e-5, 2)]
        else:                                            # buggy: add_regularization_loss in __init__
            reg_loss = torch.zeros((1,))
            for w in self.emb.parameters():
                reg_loss = reg_loss + torch.norm(w, p=2)
            self.reg_loss = self.reg_loss + 1e-5 * reg_loss

    def get_regularization_loss(self):
        total = torch.zeros((1,))
        for weight_list, wd, p in self.regularization_weight:
            r = torch.zeros((1,))
            for w in weight_list:
                r = r + torch.norm(w, p=p)
            total = total + wd * r
        return total

    def forward(self, x):
        return self.out(self.emb(x)).squeeze(-1)


def fit(fixed, steps=3):
    model = Model(fixed)
    optim = torch.optim.Adagrad(model.parameters())
    x, y = torch.randint(0, 10, (16,)), torch.rand(16)
    for _ in range(steps):
        optim.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y, reduction="sum")
        reg = model.get_regularization_loss() if fixed else model.reg_loss
        total_loss = loss + reg
        total_loss.backward(retain_graph=True)
        optim.step()


try:
    fit(False)
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
fit(True)

print("CONFIRMED")
