"""fresh33 false, minimised shape (base engine f0cf961 reports GS504 at the last line): a submodule attribute rebound to its own `.cuda()` after `Adam(self.parameters())`; `Module.cuda()` returns self, so nothing is replaced."""
import torch
from torch import nn

class M(nn.Module):
    def __init__(self, dev):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        self.enc = self.enc.cuda()
