# expect: GS903 at line 7 (torch.tensor([...]) of tensors that require grad has no history) and line 8
import torch

torch.manual_seed(0)
x = torch.randn(2, requires_grad=True)
w = x * 3
scores = torch.tensor([w[0], w[1] * 2])
scores.sum().backward()
