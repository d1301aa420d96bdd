"""fresh32 false: facebookresearch/adaptive-span main.py:131 (GS109).

Claim: "This `no_grad` block calls `train_iteration`, which differentiates a value it computes, so that raises. It does
so through `_train_batch` -> `_train_step`."

main.py, per training iteration:

    loss_train, data_pos[0], hid_cache[0] = train_iteration(
        model, optimizer, scheduler, train_data, nb_batches_per_iter,
        model_params['block_size'], False, data_pos[0], hid_cache[0], trainer_params['batch_split'])
    with torch.no_grad():
        loss_val, data_pos[1], hid_cache[1] = train_iteration(                 # line 131
            model, optimizer, scheduler, val_data, nb_batches_per_iter,
            model_params['block_size'], True, data_pos[1], hid_cache[1], trainer_params['batch_split'])

The seventh argument is `eval_only`. `train_iteration` hands it on as `_train_batch(..., eval_only=eval_only, ...)`,
which hands it on positionally to `_train_step(model, X, Y, h_cache, eval_only)`, whose only backward is under
`if not eval_only:` (and `_train_batch` steps the optimizer only under the same test). The no_grad call passes the
literal True, so nothing is differentiated inside the block. The three functions below are trainer.py's, verbatim
(comments dropped); the model is a small stand-in with the attributes they read (`model.module.adapt_io`,
`model.module.layers[0].attn.attn.adapt_span_enabled`, the h_cache in and out). Run: the main.py loop for 3
iterations, batch_split 1 and 2: the no_grad call runs, returns a float, and leaves the parameters unchanged.
"""
import math
import random
from types import SimpleNamespace

import torch
import torch.nn as nn


def _train_step(model, X, Y, h_cache, eval_only, loss_div=1):
    out, h_cache, dummy_loss = model(X, h_cache, target=Y)
    if model.module.adapt_io:
        loss = out.mean() + dummy_loss.sum()
    else:
        out = out.view(-1, out.size(-1))
        loss = torch.nn.functional.nll_loss(out, Y.view(-1))
    loss_value = loss.item() / loss_div
    if not eval_only:
        if model.module.layers[0].attn.attn.adapt_span_enabled:
            loss += sum(layer.attn.attn.adaptive_span.get_loss()
                        for layer in model.module.layers)
        (loss / loss_div).backward()
    return loss_value, h_cache


def _train_batch(model, optimizer, scheduler, X, Y, h_cache, eval_only, batch_split):
    optimizer.zero_grad()
    if batch_split == 1:
        loss_value, h_cache = _train_step(model, X, Y, h_cache, eval_only)
    else:
        assert X.size(0) % batch_split == 0
        split_size = X.size(0) // batch_split
        loss_value = 0
        h_cache_list = []
        for split_ind in range(batch_split):
            split_slice = slice(split_ind*split_size, (split_ind+1)*split_size)
            split_h_cache = [h[split_slice,:,:] for h in h_cache]
            split_loss_value, split_h_cache = _train_step(
                model, X[split_slice,:], Y[split_slice],
                split_h_cache, eval_only, batch_split)
            loss_value += split_loss_value
            h_cache_list.append(split_h_cache)
        h_cache = [
            torch.cat(
                [h_cache_list[i][l] for i in range(batch_split)]
            , dim=0) for l in range(len(h_cache))]
    if not eval_only:
        if scheduler is not None:
            scheduler.step()
        if optimizer.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), optimizer.grad_clip)
        optimizer.step()
        if model.module.layers[0].attn.attn.adapt_span_enabled:
            for layer in model.module.layers:
                layer.attn.attn.adaptive_span.clamp_param()
    return loss_value, h_cache


def train_iteration(model, optimizer, scheduler, data, nb_batches_per_iter,
                    block_size, eval_only, train_pos, h_cache, batch_split):
    if eval_only:
        model.eval()
    else:
        model.train()
    nb_batches_per_iter_max = nb_batches_per_iter
    if eval_only:
        nb_batches_per_iter_max = max(1, nb_batches_per_iter // 10)
        nb_batches_per_iter_max = min(nb_batches_per_iter_max,
                                      math.ceil(data.size(1) / block_size))
    loss_all = 0
    actual_nb_batches_per_iter = 0
    for _ in range(nb_batches_per_iter_max):
        actual_nb_batches_per_iter += 1
        X = data[:, train_pos: train_pos + block_size].contiguous()
        Y = data[:, train_pos + 1: train_pos + block_size + 1].contiguous()
        loss, h_cache = _train_batch(
            model=model, optimizer=optimizer, scheduler=scheduler,
            X=X, Y=Y, h_cache=h_cache, eval_only=eval_only, batch_split=batch_split)
        loss_all += loss
        train_pos += block_size
        if train_pos >= data.size(1) - block_size:
            train_pos = random.randrange(block_size)
            for h in h_cache:
                h.fill_(0)
    loss_all = loss_all / actual_nb_batches_per_iter
    return loss_all, train_pos, h_cache


class Span(nn.Module):
    def __init__(self):
        super().__init__()
        self.current_val = nn.Parameter(torch.zeros(1))

    def get_loss(self):
        return 0.1 * self.current_val.sum()

    def clamp_param(self):
        self.current_val.data.clamp_(0, 1)


class Layer(nn.Module):
    def __init__(self, H, cache):
        super().__init__()
        self.attn = SimpleNamespace(attn=SimpleNamespace(adapt_span_enabled=True, adaptive_span=Span(),
                                                         get_cache_size=lambda: cache))
        self.span = self.attn.attn.adaptive_span
        self.lin = nn.Linear(H, H)


class Net(nn.Module):
    def __init__(self, V=11, H=8, cache=3):
        super().__init__()
        self.adapt_io = False
        self.emb = nn.Embedding(V, H)
        self.layers = nn.ModuleList([Layer(H, cache), Layer(H, cache)])
        self.out = nn.Linear(H, V)

    def forward(self, X, h_cache, target=None):
        h = self.emb(X)
        new_cache = []
        for layer, c in zip(self.layers, h_cache):
            h = torch.tanh(layer.lin(h) + c.mean(1, keepdim=True)) * (1 + layer.span.current_val)
            new_cache.append(h[:, -c.size(1):].detach())
        return torch.log_softmax(self.out(h), -1), new_cache, torch.zeros(1)


for batch_split in (1, 2):
    torch.manual_seed(0)
    model = nn.DataParallel(Net())                        # main.py wraps the model the same way (.module)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.grad_clip = 0
    scheduler = None
    train_data = torch.randint(0, 11, (4, 200))
    val_data = torch.randint(0, 11, (4, 200))
    data_pos = [0] * 2
    hid_cache = [[torch.zeros(4, 3, 8) for _ in model.module.layers] for _ in range(2)]
    for iter_no in range(3):
        loss_train, data_pos[0], hid_cache[0] = train_iteration(
            model, optimizer, scheduler, train_data, 10, 16, False, data_pos[0], hid_cache[0], batch_split)
        before = [p.detach().clone() for p in model.parameters()]
        with torch.no_grad():
            loss_val, data_pos[1], hid_cache[1] = train_iteration(        # line 131
                model, optimizer, scheduler, val_data, 10, 16, True, data_pos[1], hid_cache[1], batch_split)
        assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))
        print(f"batch_split={batch_split} iter {iter_no}: train {loss_train:.3f}  val (under no_grad) {loss_val:.3f}")
print("OK: the no_grad call passes eval_only=True; no backward runs inside the block")

# The claim would hold only for eval_only=False, which the no_grad call never passes:
try:
    with torch.no_grad():
        train_iteration(model, optimizer, scheduler, val_data, 10, 16, False, 0, hid_cache[1], 1)
    raised = False
except RuntimeError as e:
    raised = "does not require grad" in str(e)
assert raised
print("(with eval_only=False inside no_grad the backward would raise, as the claim says)")
