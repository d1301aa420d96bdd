"""Reproduction for `lightly_benchmark_activate_requires_grad`: lightly-ai/lightly commit bc066ae7 ("Use torch.no_grad instead of deactivating gradients manually").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the benchmark classifiers freeze the model with `deactivate_requires_grad(model)` at the start of a
training epoch and "unfreeze" it with `activate_requires_grad(model)` at its end, which sets
`requires_grad=True` on every parameter, including ones that were frozen on purpose (e.g. fixed MAE/ViT
positional embeddings), so a later fine-tuning of the same model trains them; the fix runs the frozen
forward under `torch.no_grad()` and leaves the requires_grad flags alone.
"""

import torch
from torch import nn


def deactivate_requires_grad(model):
    for p in model.parameters():
        p.requires_grad = False


def activate_requires_grad(model):
    for p in model.parameters():
        p.requires_grad = True


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos_embedding = nn.Parameter(torch.randn(1, 4), requires_grad=False)   # fixed on purpose
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x + self.pos_embedding)


def linear_eval_then_finetune(fixed):
    model = Backbone()
    head = nn.Linear(4, 2)
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    # --- linear evaluation (frozen model) ---
    if not fixed:
        deactivate_requires_grad(model)           # on_train_epoch_start
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    if fixed:
        with torch.no_grad():
            feats = model(x)
    else:
        feats = model(x)
    nn.functional.cross_entropy(head(feats), y).backward()
    opt.step()
    if not fixed:
        activate_requires_grad(model)             # on_train_epoch_end
    # --- fine-tuning of the same model afterwards ---
    before = model.pos_embedding.detach().clone()
    ft_opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    nn.functional.cross_entropy(head(model(x)), y).backward()
    ft_opt.step()
    return model.pos_embedding.requires_grad, not torch.equal(before, model.pos_embedding)


assert linear_eval_then_finetune(False) == (True, True)    # the fixed embedding became trainable and moved
assert linear_eval_then_finetune(True) == (False, False)

print("CONFIRMED")
