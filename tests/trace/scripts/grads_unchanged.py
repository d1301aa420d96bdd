# expect: clean; the script checks that tracing changes neither values nor gradients
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(6, 4, requires_grad=True)
w = torch.randn(4, 4, requires_grad=True)
h = x @ w
h = h * 2
h += 1
h = torch.relu(h) * 1.0
h[0] = 0.5
y = (h.sigmoid() * h).sum()
y.backward()

x2 = x.detach().clone().requires_grad_(True)
w2 = w.detach().clone().requires_grad_(True)
h2 = torch.relu(2 * (x2 @ w2) + 1)
h2 = torch.cat([torch.full_like(h2[:1], 0.5), h2[1:]])
y2 = (h2.sigmoid() * h2).sum()
y2.backward()
assert torch.allclose(y, y2), "value changed under tracing"
assert torch.allclose(w.grad, w2.grad, atol=1e-6), "gradient changed under tracing"
assert torch.allclose(x.grad, x2.grad, atol=1e-6), "gradient changed under tracing"

buf = torch.zeros(3)
buf.add_(1)
assert buf.tolist() == [1.0, 1.0, 1.0]
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(inplace=True), nn.Linear(8, 1))
out = model(x.detach())
out.mean().backward()
assert all(p.grad is not None for p in model.parameters())

# Double backward through unpacked saved tensors: d/dx sum((3x^2)^2) = 36 x^3.
z = torch.randn(5, requires_grad=True)
(gz,) = torch.autograd.grad(z.pow(3).sum(), z, create_graph=True)
gz.pow(2).sum().backward()
assert torch.allclose(z.grad, 36 * z.detach() ** 3, rtol=1e-4), "double backward changed under tracing"
