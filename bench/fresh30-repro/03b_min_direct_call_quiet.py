"""fresh30 minimisation of the R2Gen harmless shape (see bench/fresh30-notes.md): the same with a direct model._sample call; the base engine is quiet."""
import torch
import torch.nn.functional as F
from torch import nn


class Cap(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 11)

    def forward(self, *args, **kwargs):
        mode = kwargs.get('mode', 'forward')
        if 'mode' in kwargs:
            del kwargs['mode']
        return getattr(self, '_' + mode)(*args, **kwargs)

    def _forward(self, x):
        return F.log_softmax(self.lin(x), dim=-1)

    def _sample(self, x):
        logprobs = F.log_softmax(self.lin(x), dim=-1)
        logprobs[:, [1, 2]] = logprobs[:, [1, 2]] - 0.5
        return logprobs.argmax(-1), logprobs


model = Cap()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = -model(torch.randn(4, 8), mode='forward')[:, 0].mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        seq, _ = model._sample(torch.randn(4, 8))
