"""fresh33 false, minimised shape (base engine is quiet): the same rebinding on a local, `enc = enc.to("cpu")` after the optimizer; only the self-attribute form is reported."""
import torch
from torch import nn
enc = nn.Linear(4, 4)
optimizer = torch.optim.Adam(enc.parameters(), lr=1e-3)
enc = enc.to("cpu")
assert {id(p) for g in optimizer.param_groups for p in g["params"]} == {id(p) for p in enc.parameters()}
print("OK")
