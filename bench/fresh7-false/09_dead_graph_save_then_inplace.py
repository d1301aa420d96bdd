# From GradientEpisodicMemory model/icarl.py:199 (fifth round; surfaced in the ninth session by split_tail).
# Finding: GS301 "This in-place write overwrites a tensor saved for backward ... `exemplars[:ee]`, which shares its
# storage, was saved for backward by `Linear`".
# Why wrong: the graph whose `Linear` saved `exemplars[:ee]` is dropped at once by `.data.clone()`; no backward can
# ever read what it saved. The engine's end-of-function check (`graph_outlives`) asks whether any graph outlives the
# function, and `exemplars`, returned, may carry one from `cdata` (unknown grad state). Runs clean under torch.
import torch
import torch.nn as nn


class Learner(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)

    def observe(self, cdata, n):
        exemplars = torch.zeros(n, 4)
        for ee in range(n):
            prev = torch.zeros(1, 3)
            if ee > 0:
                prev = self.net(exemplars[:ee]).data.clone().sum(0)
            exemplars[ee] = cdata[ee].clone() + prev.sum()
        return exemplars


Learner().observe(torch.randn(5, 4), 3)
