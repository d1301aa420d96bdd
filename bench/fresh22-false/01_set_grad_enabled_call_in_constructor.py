"""fresh22 false: songyouwei/ABSA-PyTorch infer_example.py:88 (GS201).

`Inferer.__init__` ends with `self.model.eval(); torch.autograd.set_grad_enabled(False)` -- called as a plain
function, not as a `with` block: it turns grad mode off for the thread from then on. `evaluate` (a method of the
same object, so it always runs after `__init__`) does `t_outputs = self.model(t_inputs)` and
`F.softmax(t_outputs, dim=-1).cpu().numpy()`: the outputs have no history and `.numpy()` works. The script
(`inf = Inferer(opt); inf.evaluate(...)`) is the only user. Run below with the same statements.
"""
import torch
from torch import nn
import torch.nn.functional as F


class Inferer:
    def __init__(self):
        self.model = nn.Sequential(nn.Embedding(100, 16), nn.Flatten(), nn.Linear(16 * 5, 3))
        self.model.eval()
        torch.autograd.set_grad_enabled(False)              # infer_example.py:43

    def evaluate(self, idx):
        t_inputs = torch.tensor([idx])
        t_outputs = self.model(t_inputs)
        t_probs = F.softmax(t_outputs, dim=-1).cpu().numpy()   # infer_example.py:88
        return t_probs


inf = Inferer()
assert not torch.is_grad_enabled()
p = inf.evaluate([1, 2, 3, 4, 5])
print("probs:", p, "- grad mode stayed off after __init__, numpy() works")
assert p.shape == (1, 3)

torch.set_grad_enabled(True)                         # contrast: without the constructor's call, line 88 raises
m = nn.Linear(3, 3)
try:
    F.softmax(m(torch.randn(1, 3)), dim=-1).cpu().numpy()
    raise SystemExit("expected the numpy() error with grad mode on")
except RuntimeError as e:
    assert "requires grad" in str(e)
    print("contrast, grad mode on:", str(e)[:60], "...")
