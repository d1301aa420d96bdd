"""fresh25 false: deep-learning-with-pytorch/dlwpt-code p2ch14/training.py:322 (GS305).

`computeBatchLoss` runs `logits_g, probability_g = self.model(input_g)` (probability_g: the softmax head's output,
with its graph) and then `_, predLabel_g = torch.max(probability_g, dim=1, keepdim=False, out=None)`. `out=None`
is the default spelled out: no output buffer is given, so the call records history like any other and nothing
raises. gradsight takes the presence of an `out` keyword as an `out=` call, whatever its value. Run below: the call
works on a tensor that requires grad, its values keep their graph, and a real buffer (`out=(v, i)`) is what raises.
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 2))
logits_g = model(torch.randn(4, 8))
probability_g = nn.Softmax(dim=1)(logits_g)

_, predLabel_g = torch.max(probability_g, dim=1, keepdim=False, out=None)     # training.py:322
print("values require grad:", _.requires_grad, "| labels:", predLabel_g.tolist())
assert _.requires_grad and predLabel_g.dtype == torch.long
_.sum().backward()
assert model[0].weight.grad is not None

try:
    torch.max(probability_g, dim=1, keepdim=False, out=(torch.empty(4), torch.empty(4, dtype=torch.long)))
except RuntimeError as e:
    print("a real out= buffer raises:", str(e)[:90])
    assert "out=" in str(e)
else:
    raise AssertionError("a real out= buffer did not raise")
