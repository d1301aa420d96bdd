"""fresh26 false: lyakaap/VAT-pytorch vat.py:53 (GS410).

`VATLoss.forward(self, model, x)` computes `pred` under `torch.no_grad()`, makes a random direction `d` (a fresh
local tensor), and in the power iteration runs `d.requires_grad_()`, `pred_hat = model(x + self.xi * d)`,
`adv_distance = F.kl_div(...)`, `adv_distance.backward()`, `d = _l2_normalize(d.grad)`, `model.zero_grad()`; then
builds the returned `lds` from a new forward. The graph that backward frees was made inside this call from `d`,
`x` and the parameters; the caller's `x` (`x_ul` from the unlabeled DataLoader in train_CIFAR10.py) carries no
graph, and the caller builds its own loss after the call (`lds = vat_loss(model, x_ul)`, `output = model(x_l)`,
`loss = cross_entropy(output, y_l) + args.alpha * lds`, `loss.backward()`). Nothing of the caller's graph is freed,
and the returned `lds` is backwarded once. Run below: the real VATLoss and the training step of train_CIFAR10.py
(BatchNorm model included, as `_disable_tracking_bn_stats` expects): 3 steps train without error.
"""
import contextlib
import torch
import torch.nn as nn
import torch.nn.functional as F


@contextlib.contextmanager
def _disable_tracking_bn_stats(model):
    def switch_attr(m):
        if hasattr(m, 'track_running_stats'):
            m.track_running_stats ^= True
    model.apply(switch_attr)
    yield
    model.apply(switch_attr)


def _l2_normalize(d):
    d_reshaped = d.view(d.shape[0], -1, *(1 for _ in range(d.dim() - 2)))
    d /= torch.norm(d_reshaped, dim=1, keepdim=True) + 1e-8
    return d


class VATLoss(nn.Module):
    def __init__(self, xi=10.0, eps=1.0, ip=1):
        super(VATLoss, self).__init__()
        self.xi, self.eps, self.ip = xi, eps, ip

    def forward(self, model, x):
        with torch.no_grad():
            pred = F.softmax(model(x), dim=1)
        d = torch.rand(x.shape).sub(0.5).to(x.device)
        d = _l2_normalize(d)
        with _disable_tracking_bn_stats(model):
            for _ in range(self.ip):
                d.requires_grad_()
                pred_hat = model(x + self.xi * d)
                logp_hat = F.log_softmax(pred_hat, dim=1)
                adv_distance = F.kl_div(logp_hat, pred, reduction='batchmean')
                adv_distance.backward()                              # vat.py:53
                d = _l2_normalize(d.grad)
                model.zero_grad()
            r_adv = d * self.eps
            pred_hat = model(x + r_adv)
            logp_hat = F.log_softmax(pred_hat, dim=1)
            lds = F.kl_div(logp_hat, pred, reduction='batchmean')
        return lds


torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(8, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
w0 = model[-1].weight.detach().clone()
for step in range(3):                                    # train_CIFAR10.py's loop body
    x_l, y_l = torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))
    x_ul = torch.randn(6, 3, 8, 8)
    optimizer.zero_grad()
    vat_loss = VATLoss(xi=10.0, eps=1.0, ip=1)
    cross_entropy = nn.CrossEntropyLoss()
    lds = vat_loss(model, x_ul)
    output = model(x_l)
    classification_loss = cross_entropy(output, y_l)
    loss = classification_loss + 1.0 * lds
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f} (lds {lds.item():.4f})")
assert not torch.equal(w0, model[-1].weight)
print("the caller's backward runs every step; the model trains")
