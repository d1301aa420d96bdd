"""fresh18 (real): GS404 edebrouwer/gru_ode_bayes `experiments/Climate/climate_gruode.py:84`,
`experiments/MIMIC/mimic_gruode.py:95`; SeuTao/RSNA2019_Intracranial-Hemorrhage-Detection `SequenceModel/main.py:83`;
pliang279/LG-FedAvg `models/test.py:40`.

* gru_ode_bayes: `total_train_loss += total_loss` (a tensor with its graph) every batch, reset per epoch, read once
  per epoch (`total_train_loss.detach().cpu().numpy()`), after `total_loss.backward()`.
* RSNA SequenceModel: `running_loss += loss * data.shape[0]` after `loss.backward()` every batch, reset per epoch.
* LG-FedAvg `test_img`: `net_g.eval()` then `probs.append(log_probs)` per test batch with grad mode on (main_fed.py
  calls it outside `torch.no_grad()`): every batch's forward graph (saved activations) is kept for the whole pass.
Each keeps one more graph per step: the number of graph nodes reachable from what is kept grows with the steps.
"""
import torch
import torch.nn as nn


def nodes(t):
    seen, todo = set(), [t.grad_fn]
    while todo:
        f = todo.pop()
        if f is None or f in seen:
            continue
        seen.add(f)
        todo.extend(g for g, _ in f.next_functions)
    return len(seen)


model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters())
class_criterion = nn.BCEWithLogitsLoss(reduction="sum")
total_train_loss = 0
counts = []
for i in range(5):                     # gru_ode_bayes' loop, shortened
    opt.zero_grad()
    x, labels = torch.randn(16, 4), torch.randint(0, 2, (16, 1)).float()
    total_loss = class_criterion(model(x), labels) / 16
    total_train_loss += total_loss
    total_loss.backward()
    opt.step()
    counts.append(nodes(total_train_loss))
print("running total's graph nodes per step:", counts)
assert counts[-1] > counts[0]

running_loss = 0.0
counts = []
for i in range(5):                     # RSNA SequenceModel's loop, shortened
    opt.zero_grad()
    data = torch.randn(16, 4)
    loss = model(data).pow(2).mean()
    loss.backward()
    opt.step()
    running_loss += loss * data.shape[0]
    counts.append(nodes(running_loss))
print("running_loss graph nodes per step:", counts)
assert counts[-1] > counts[0]

model.eval()                           # LG-FedAvg test_img: eval mode, grad mode on
probs = []
for i in range(5):
    log_probs = model(torch.randn(16, 4))
    probs.append(log_probs)
print("kept graphs:", sum(p.grad_fn is not None for p in probs), "of", len(probs), "batches; nodes",
      sum(nodes(p) for p in probs))
assert all(p.requires_grad for p in probs)
