"""fresh21 false: tugstugi/pytorch-dc-tts train-ssrn.py:104 (GS404).

Shape: `loss.backward()` only `if phase == 'train':`, then `loss = loss.item()` rebinds the loss's own name to a
Python float and `running_loss += loss` adds that float. Nothing with a graph is kept. gradsight (reproduced with a
20-line loop: the warning needs the backward under an `if` and the model's output known as a tensor; `val =
loss.item()` or no `if` is quiet) still treats `loss` at line 104 as the tensor. The loop body of `train`
(train-ssrn.py:78-105) with a small SSRN stand-in (the repository's returns `(Z_logit, sigmoid(Z_logit))`).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SSRN(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Conv1d(4, 6, 1)

    def forward(self, x):
        Z_logit = self.layers(x)
        return Z_logit, F.sigmoid(Z_logit)


ssrn = SSRN()
optimizer = torch.optim.Adam(ssrn.parameters(), lr=1e-3)
for phase in ("train", "valid"):
    torch.set_grad_enabled(True) if phase == 'train' else torch.set_grad_enabled(False)
    running_loss, running_l1_loss = 0.0, 0.0
    for it in range(3):
        M, S = torch.rand(2, 6, 5), torch.randn(2, 4, 5)
        Z_logit, Z = ssrn(S)
        l1_loss = F.l1_loss(Z, M)
        loss = l1_loss
        if phase == 'train':
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        loss = loss.item()
        l1_loss = l1_loss.item()
        running_loss += loss                   # train-ssrn.py:104
        running_l1_loss += l1_loss
        assert type(running_loss) is float
    print(phase, "running_loss is a", type(running_loss).__name__, round(running_loss, 4))
torch.set_grad_enabled(True)
print("OK: running_loss accumulates Python floats; no graph is kept")
