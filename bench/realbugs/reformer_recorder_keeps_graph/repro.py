"""Reproduction for `reformer_recorder_keeps_graph`: lucidrains/reformer-pytorch f6f1e89 (detach variables being recorded).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import gc
import weakref

import torch


class Recorder:
    def __init__(self, fixed):
        self.fixed = fixed
        self.recordings = []

    def record(self, attn, buckets):
        if self.fixed:
            data = {'attn': attn.detach().cpu(), 'buckets': buckets.detach().cpu()}
        else:
            data = {'attn': attn.cpu(), 'buckets': buckets.cpu()}      # buggy: .cpu() on CPU is the same tensor
        self.recordings.append(data)


def run_forwards(fixed):     # forward passes in grad mode with the recorder on (visualising a model)
    torch.manual_seed(0)
    qk = torch.nn.Linear(8, 8)
    rec = Recorder(fixed)
    refs = []
    for _ in range(3):
        h = qk(torch.randn(4, 8)).relu()          # relu saves its output
        refs.append(weakref.ref(h))
        attn = (h @ h.t()).softmax(-1)
        rec.record(attn, torch.zeros(4, dtype=torch.long))
        del h, attn
    gc.collect()
    return rec, sum(r() is not None for r in refs)


rec, alive = run_forwards(False)
assert rec.recordings[0]['attn'].requires_grad and alive == 3, alive      # every step's graph is kept
rec, alive = run_forwards(True)
assert not rec.recordings[0]['attn'].requires_grad and alive == 0, alive
print("CONFIRMED")
