"""fresh19 (real): GS404 McGregorWwww/UCTransNet `Train_one_epoch.py:94, 97, 100`.

`train_one_epoch` (training call: model in train mode, grad mode on) backwards `out_loss`, steps, and then
computes `train_dice = criterion._show_dice(preds, masks.float())` with grad mode on: `_show_dice` writes `preds`
in place (`inputs[inputs>=0.5] = 1`) and runs `WeightedDiceLoss` on it, so `train_dice` carries a graph whose
saved tensors (`p`, `t`, batch x H*W) are never freed. Then, every batch:
    dices.append(train_dice)                       # line 94
    loss_sum += len(images) * out_loss             # line 97 (graph chain after backward)
    dice_sum += len(images) * train_dice           # line 100
`dices`, `loss_sum` and `dice_sum` live for the whole epoch, so the number of autograd nodes (and, for the two dice
accumulators, the saved mask-sized tensors) they keep alive grows with every batch. Runs: prints growing counts.
"""
import torch
import torch.nn as nn


class WeightedDiceLoss(nn.Module):
    def forward(self, logit, truth, smooth=1e-5):
        b = len(logit)
        p, t = logit.view(b, -1), truth.view(b, -1)
        w = truth.detach().view(b, -1) * 0.0 + 0.5
        p, t = w * p, w * t
        inter = (p * t).sum(-1)
        union = (p * p).sum(-1) + (t * t).sum(-1)
        return (1 - (2 * inter + smooth) / (union + smooth)).mean()


class WeightedDiceBCE(nn.Module):
    def __init__(self):
        super().__init__()
        self.dice_loss = WeightedDiceLoss()

    def _show_dice(self, inputs, targets):
        inputs[inputs >= 0.5] = 1
        inputs[inputs < 0.5] = 0
        return 1.0 - self.dice_loss(inputs, targets)

    def forward(self, inputs, targets):
        return self.dice_loss(inputs, targets) + nn.functional.binary_cross_entropy(inputs, targets)


def nodes(t):
    seen, stack = set(), [t.grad_fn] if isinstance(t, torch.Tensor) and t.grad_fn else []
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        stack.extend(f for f, _ in n.next_functions)
    return len(seen)


torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 1), nn.Sigmoid())
criterion = WeightedDiceBCE()
opt = torch.optim.Adam(model.parameters())
model.train()
dices, loss_sum, dice_sum = [], 0, 0.0
for i in range(4):
    images = torch.randn(2, 1, 8, 8)
    masks = (torch.rand(2, 1, 8, 8) > 0.5).float()
    preds = model(images)
    out_loss = criterion(preds, masks)
    opt.zero_grad()
    out_loss.backward()
    opt.step()
    train_dice = criterion._show_dice(preds, masks.float())
    dices.append(train_dice)
    loss_sum += len(images) * out_loss
    dice_sum += len(images) * train_dice
    print(f"batch {i}: train_dice requires_grad={train_dice.requires_grad}; nodes kept by loss_sum={nodes(loss_sum)}, "
          f"dice_sum={nodes(dice_sum)}, dices={sum(nodes(d) for d in dices)}")
assert nodes(dice_sum) > 4 * nodes(train_dice) // 2
