# From facebookresearch/mmf mmf/models/lxmert.py:455 (fresh8, first try at 74f27a1).
# Finding: GS510 "Modules in a plain dict are not registered, so the optimizer never trains them; use `nn.ModuleDict`."
# Why wrong: the dict holds loss modules built without a `weight`/`pos_weight` tensor (`SmoothL1Loss(reduction=...)`,
# `CrossEntropyLoss(ignore_index=-1, ...)`): they have no parameters and no buffers (`weight` is a None buffer, not
# in `buffers()` or the state dict), so leaving them unregistered loses nothing: no training, no `.to()`, no
# checkpoint entry. The rule already keeps parameter-free layers (`nn.AvgPool1d`, `nn.ReLU`) quiet; loss modules
# built without a tensor argument are the same case. (A loss given `weight=torch.tensor(...)` does hold a buffer
# that `.to()` would miss.)
import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss, SmoothL1Loss


class Pretraining(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 5)
        self.loss_fcts = {
            "l2": SmoothL1Loss(reduction="none"),
            "ce": CrossEntropyLoss(ignore_index=-1, reduction="none"),
            "ce_lang": CrossEntropyLoss(ignore_index=-1),
        }

    def forward(self, x, labels, feats):
        scores = self.head(x)
        return self.loss_fcts["ce_lang"](scores, labels) + self.loss_fcts["l2"](scores, feats).mean()


m = Pretraining()
assert all(not list(f.parameters()) and not list(f.buffers()) for f in m.loss_fcts.values())
reference = nn.ModuleDict(m.loss_fcts)
assert not list(reference.parameters()) and not list(reference.buffers()) and not reference.state_dict()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
loss = m(torch.randn(8, 4), torch.randint(0, 5, (8,)), torch.randn(8, 5))
loss.backward()
opt.step()
print(loss.item())
