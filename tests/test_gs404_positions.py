"""GS404's severity for a graph chained through a loop that nothing backwards follows what grows with it. A Viterbi
decode in grad mode (dsindex/ntagger's `CRF._viterbi_decode`, bench/fresh33-repro/04) chains `score` through
`for i in range(1, seq_length)` with `seq_length` taken from a tensor's shape and returns integer tags: the graph grows
with one input's length and dies with the call, so the finding is information (wrap it in `no_grad` to save the work).
The same decode over a list of (emission, mask) pairs handed in keeps a node per pair until the function
returns: memory grows with the data, and the finding stays a warning. Torch confirms both: the decode's result has no
graph, and the chained value's graph holds one node per step."""

import subprocess
import sys

import pytest

from gradsight.analysis import analyze_source
from gradsight.findings import Severity

DECODE = '''import torch
import torch.nn as nn


class CRF(nn.Module):
    def __init__(self, num_tags):
        super().__init__()
        self.transitions = nn.Parameter(torch.randn(num_tags, num_tags))
        self.start = nn.Parameter(torch.randn(num_tags))

    def decode(self, emissions, mask):
        seq_length, batch_size = mask.shape
        score = self.start + emissions[0]
        history = []
        for i in range(1, seq_length):
            next_score = score.unsqueeze(2) + self.transitions + emissions[i].unsqueeze(1)
            next_score, indices = next_score.max(dim=1)
            score = torch.where(mask[i].unsqueeze(-1).bool(), next_score, score)
            history.append(indices)
        _, best_last = score.max(dim=1)
        return best_last, history


crf = CRF(3)
tags, history = crf.decode(torch.randn(5, 2, 3), torch.ones(5, 2))
'''

DATA = '''import torch
import torch.nn as nn


class CRF(nn.Module):
    def __init__(self, num_tags):
        super().__init__()
        self.transitions = nn.Parameter(torch.randn(num_tags, num_tags))
        self.start = nn.Parameter(torch.randn(num_tags))

    def decode(self, batches):
        score = self.start.unsqueeze(0).expand(2, -1)
        history = []
        for emission, m in batches:
            next_score = score.unsqueeze(2) + self.transitions + emission.unsqueeze(1)
            next_score, indices = next_score.max(dim=1)
            score = torch.where(m.unsqueeze(-1).bool(), next_score, score)
            history.append(indices)
        _, best_last = score.max(dim=1)
        return best_last, history


crf = CRF(3)
tags, history = crf.decode([(torch.randn(2, 3), torch.ones(2)) for _ in range(5)])
'''


def gs404(src):
    return [(f.line, f.severity) for f in analyze_source(src, "m.py").findings if f.code == "GS404"]


def test_a_chain_over_one_inputs_positions_is_information():
    assert gs404(DECODE) == [(18, Severity.INFORMATION)]


def test_a_chain_over_the_data_stays_a_warning():
    assert gs404(DATA) == [(17, Severity.WARNING)]


@pytest.mark.torch
def test_torch_agrees():
    pytest.importorskip("torch")
    check = "print(tags.requires_grad, tags.grad_fn is None)\n"
    for src in (DECODE, DATA):
        out = subprocess.run([sys.executable, "-c", src + check], capture_output=True, text=True, timeout=120)
        assert out.stdout.strip() == "False True", out.stderr
    # Inside the call the chain holds one `where` node per position: the graph grows with the input's length.
    probe = DECODE.replace("        _, best_last = score.max(dim=1)\n",
                           "        n, f = 0, score.grad_fn\n        while f is not None:\n"
                           "            n += f.name().startswith('Where')\n"
                           "            f = f.next_functions[0][0] if f.next_functions else None\n"
                           "        print(n)\n        _, best_last = score.max(dim=1)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "4", out.stderr
