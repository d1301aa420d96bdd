# expect: clean; custom Function, checkpointing, double backward, manual SGD, eval under no_grad
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


torch.manual_seed(0)
block = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
w = torch.randn(4, 1, requires_grad=True)
for step in range(3):
    x = torch.randn(16, 4, requires_grad=True)
    h = checkpoint(block, x, use_reentrant=False)
    y = Square.apply(h) @ w
    (gx,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    loss = y.pow(2).mean() + gx.pow(2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.01 * w.grad
        for p in block.parameters():
            p -= 0.01 * p.grad
            p.grad = None
        w.grad.zero_()
block.eval()
with torch.no_grad():
    val = block(torch.randn(4, 4)).sum().item()
assert abs(Square.apply(torch.tensor(3.0)).item() - 9.0) < 1e-6
