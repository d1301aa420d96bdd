"""Reproduction for `dctr_dien_aux_loss_inplace_accum`: shenweichen/DeepCTR-Torch commit 752bf373 ("DIEN: fix gru and loss error.").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `add_auxiliary_loss` does `self.aux_loss += aux_loss * alpha` on a tensor kept on the model, so every forward
chains the new auxiliary loss onto the previous steps' graphs (retained by `backward(retain_graph=True)`); after the
first `optim.step()` the next backward reaches the old graph whose saved weights were updated in place and raises
"modified by an inplace operation" (the commit message's error). The fix assigns `self.aux_loss = aux_loss * alpha`.
"""

import torch

torch.manual_seed(0)


class DIEN(torch.nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.fixed = fixed
        self.emb = torch.nn.Embedding(10, 4)
        self.extractor = torch.nn.Linear(4, 4)
        self.out = torch.nn.Linear(4, 1)
        self.aux_loss = torch.zeros((1,))

    def add_auxiliary_loss(self, aux_loss, alpha):
        if self.fixed:
            self.aux_loss = aux_loss * alpha
        else:
            self.aux_loss += aux_loss * alpha        # buggy

    def forward(self, x):
        h = torch.sigmoid(self.extractor(self.emb(x)))   # interest extractor over embeddings
        self.add_auxiliary_loss((h ** 2).mean(), 1.0)
        return self.out(h).squeeze(-1)


def fit(fixed, steps=3):
    model = DIEN(fixed)
    optim = torch.optim.Adam(model.parameters())
    x, y = torch.randint(0, 10, (8,)), torch.rand(8)
    for _ in range(steps):
        y_pred = model(x)
        optim.zero_grad()
        loss = torch.nn.functional.mse_loss(y_pred, y, reduction="sum")
        total_loss = loss + model.aux_loss
        total_loss.backward(retain_graph=True)
        optim.step()
    return model


try:
    fit(False)
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
m = fit(True)
assert m.aux_loss.grad_fn is not None and m.aux_loss.numel() == 1

print("CONFIRMED")
