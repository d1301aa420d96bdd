# expect: GS901 line 8 warning (.data write to a saved tensor: silently wrong gradient)
import torch

torch.manual_seed(0)
x = torch.randn(5, requires_grad=True)
y = x.exp()
z = (y * y).sum()
y.data.mul_(2)
z.backward()
