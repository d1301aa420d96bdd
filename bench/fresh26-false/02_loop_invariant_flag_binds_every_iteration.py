"""fresh26 false: perrying/pytorch-consistency-regularization moon_data_exp.py:179 (GS402, reported twice: the two
reads of `unlabeled_logits` on the line).

In `fit`, each iteration binds `unlabeled_logits` only under `if cfg.coef > 0:` (line 162) and reads it at line 179
under `if cfg.entropy_minimize > 0:`, then `loss.backward()` (185). `cfg` is not written in the loop, so the first
test goes the same way in every iteration: with coef > 0 line 179 always reads this iteration's value; with
coef <= 0 the name is never bound and line 179 raises NameError in the first iteration. No iteration reads an
earlier iteration's (freed) graph. Run below with the real statements (gen_model's MLP, the `cr` algorithm
reduced to its consistency term): (a) coef > 0: 20 iterations train with entropy minimisation on, no error
(with `dim=0` in the chunk: as written, `torch.chunk(outputs[...], 2, dim=2)` on the 2-D logits raises
IndexError at line 162 in the first iteration, a separate bug gradsight does not report); (b) coef = 0: UnboundLocalError (a NameError)
at line 179 in the first iteration, never "backward through the graph a second time".
"""
import types
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


def gen_model():
    return nn.Sequential(nn.Linear(2, 128), nn.ReLU(), nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 2))


def fit(cfg, chunk_dim):
    torch.manual_seed(0)
    model = gen_model()
    optimizer = optim.Adam(model.parameters(), cfg.lr)
    weak_augmentation = lambda x: x + torch.randn_like(x) * cfg.gauss_std
    tch_labeled_data, label = torch.randn(10, 2), torch.randint(0, 2, (10,))
    tch_unlabeled_data = torch.randn(50, 2)
    for i in range(cfg.iterations):
        unlabeled_weak1 = weak_augmentation(tch_unlabeled_data)
        unlabeled_weak2 = weak_augmentation(tch_unlabeled_data)
        all_data = torch.cat([tch_labeled_data, unlabeled_weak1, unlabeled_weak2], 0)
        outputs = model(all_data)
        labeled_logits = outputs[:tch_labeled_data.shape[0]]
        loss = F.cross_entropy(labeled_logits, label)
        if cfg.coef > 0:
            unlabeled_logits, unlabeled_logits_target = torch.chunk(outputs[tch_labeled_data.shape[0]:], 2, dim=chunk_dim)
            y, targets = unlabeled_logits, unlabeled_logits_target.detach().softmax(1)
            L_consistency = -(targets * F.log_softmax(y, 1)).sum(1).mean()
            loss += cfg.coef * L_consistency
        else:
            L_consistency = torch.zeros_like(loss)
        if cfg.entropy_minimize > 0:
            loss -= cfg.entropy_minimize * (unlabeled_logits.softmax(1) * F.log_softmax(unlabeled_logits, 1)).sum(1).mean()  # :179
        optimizer.zero_grad()
        loss.backward()                                                                     # :185
        optimizer.step()
    return cfg.iterations


cfg = types.SimpleNamespace(lr=0.01, gauss_std=0.1, iterations=20, coef=1.0, entropy_minimize=0.5)
try:
    fit(cfg, chunk_dim=2)
except IndexError as e:
    print("as written (dim=2 on 2-D logits), line 162 raises:", str(e)[:70])
print("(a) coef > 0, dim=0:", fit(cfg, chunk_dim=0), "iterations, no error")
cfg.coef = 0
try:
    fit(cfg, chunk_dim=0)
except NameError as e:
    print("(b) coef = 0: first iteration raises", type(e).__name__, "-", e)
else:
    raise AssertionError("expected NameError")
