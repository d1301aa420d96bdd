"""fresh15 (real): GS404 Pointnet_Pointnet2_pytorch `train_semseg.py:202` (`loss_sum += loss`, reset per epoch)
and bpr `train.py:191` (`smooth_loss = smooth_loss*0.99 + loss*0.01`, never reset over the whole run).

Each step's loss (after its backward) is chained into the running tensor: the autograd graph behind the total
keeps one more node chain per step, so the chain grows with every batch.
"""
import torch

w = torch.randn(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.01)
smooth_loss = 0


def depth(t):
    n, d = t.grad_fn, 0
    while n is not None:
        nxt = [f for f, _ in n.next_functions if f is not None and type(f).__name__ != "AccumulateGrad"]
        n = nxt[0] if nxt else None
        d += 1
    return d


for step in range(50):
    opt.zero_grad()
    loss = (w * torch.randn(3)).pow(2).sum()
    loss.backward()
    opt.step()
    smooth_loss = smooth_loss * 0.99 + loss * 0.01
    if step in (0, 9, 49):
        print("step", step, "grad_fn chain length", depth(smooth_loss))
assert smooth_loss.requires_grad and depth(smooth_loss) > 50
