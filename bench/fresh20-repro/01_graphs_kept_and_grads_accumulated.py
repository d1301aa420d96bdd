"""fresh20 (real): GS404 nicola-decao/BNAF `density_estimation.py:208`; GS503 yaoyao-liu/class-incremental-learning
`adaptive-aggregation-networks/trainer/incremental_lucir.py:171`.

* BNAF `train`: `loss.backward()`, step, then `train_loss.append(loss)` every batch, reset per epoch and read once
  (`torch.stack(train_loss).mean()`): each kept loss holds its graph's nodes, so the kept graph grows per batch.
* AANets LUCIR: the balanced-data loop runs `loss.backward(); fusion_optimizer.step()` up to 501 times per epoch
  and `fusion_optimizer.zero_grad()` is never called (the iCaRL trainer of the same repository calls it), while the
  training loop's `tg_optimizer.zero_grad()` covers only the branch models: the aggregation weights are stepped
  with the sum of every gradient since the phase began.
"""
import torch
import torch.nn as nn


def nodes(ts):
    seen, todo = set(), [t.grad_fn for t in ts]
    while todo:
        f = todo.pop()
        if f is None or f in seen:
            continue
        seen.add(f)
        todo.extend(g for g, _ in f.next_functions)
    return len(seen)


# BNAF: losses appended after their backward.
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
opt = torch.optim.Adam(model.parameters())
train_loss, counts = [], []
for step in range(5):
    x_mb = torch.randn(16, 4)
    loss = -torch.distributions.Normal(0, 1).log_prob(model(x_mb)).sum(-1).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    train_loss.append(loss)
    counts.append(nodes(train_loss))
print("BNAF: graph nodes kept alive by train_loss after each batch:", counts)
assert counts[-1] > counts[0] and all(t.requires_grad for t in train_loss)

# AANets LUCIR: the fusion weights' gradient is never zeroed.
b1, b2 = nn.Linear(4, 3), nn.Linear(4, 3)
fusion_vars = nn.ParameterList([nn.Parameter(torch.tensor([0.5]))])
tg_optimizer = torch.optim.SGD(list(b1.parameters()) + list(b2.parameters()), lr=0.1)
fusion_optimizer = torch.optim.SGD(fusion_vars, lr=1e-8)
data = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(4)]


def forward(x):
    return fusion_vars[0] * b1(x) + (1 - fusion_vars[0]) * b2(x)


for x, y in data:                      # training loop: zeroes only tg_optimizer's parameters
    tg_optimizer.zero_grad()
    nn.CrossEntropyLoss()(forward(x), y).backward()
    tg_optimizer.step()
seen = []
for x, y in data:                      # the balanced loop: backward and step, no zero_grad
    before = fusion_vars[0].grad.clone()
    own = torch.autograd.grad(nn.CrossEntropyLoss()(forward(x), y), fusion_vars[0])[0]
    nn.CrossEntropyLoss()(forward(x), y).backward()
    fusion_optimizer.step()
    seen.append((fusion_vars[0].grad - own).abs().item())
    assert torch.allclose(fusion_vars[0].grad, before + own)
print("AANets: |grad used by each fusion step - that batch's own gradient|:", seen)
assert all(s > 0 for s in seen)
