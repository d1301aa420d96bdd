"""fresh31 real: ildoonet/kaggle-human-protein-atlas-image-classification ensemble_nn4.py:298 (GS404).

`eval_batch(data_all, logit_all, in_train=False)` loops over the whole split in batches of `bs` and runs
`out_batch = net(...)` then `out_list.append(out_batch)` with grad mode on (the file has no `torch.no_grad()`;
the callers run `net.eval()` but never turn grad off), then returns `torch.cat(out_list)`. Its callers only
compute `loss_fn(out, lb_v).item()` (lines 340-345, 355-360, twice per training step, on the validation and
train_v splits) or take `out.detach().cpu().numpy()` (437, 447): nothing backwards it. So every batch's forward
graph, with the activations each layer saved, is kept until the whole split has run. The test-set loop at 461-466
appends `out_batch.detach().cpu().numpy()` instead. Run below: the real EnsembleNet (smaller sizes, CPU); the
number of saved tensors reachable from `out_list` grows with each batch, and the returned result requires grad.
"""
import torch


def reachable_saved(roots):
    seen, stack, saved = set(), [t.grad_fn for t in roots if t.grad_fn is not None], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        saved += sum(1 for a in dir(fn) if a.startswith("_saved_"))
        stack.extend(f for f, _ in fn.next_functions)
    return saved


input_size, n_cls, bs = 12, 28, 4


class EnsembleNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        num_feat = 16
        self.dropch = torch.nn.Dropout2d(0.5)
        self.net = torch.nn.Sequential(torch.nn.Dropout(0.5), torch.nn.Linear(input_size, num_feat),
                                       torch.nn.BatchNorm1d(num_feat), torch.nn.ReLU6())
        self.net2 = torch.nn.Sequential(torch.nn.Dropout(0.5), torch.nn.Linear(num_feat, num_feat),
                                        torch.nn.BatchNorm1d(num_feat), torch.nn.ReLU6(),
                                        torch.nn.Linear(num_feat, num_feat), torch.nn.BatchNorm1d(num_feat),
                                        torch.nn.ReLU6())
        self.out = torch.nn.Linear(num_feat, n_cls)

    def forward(self, feats, logits, in_train=False):
        logits = self.dropch(logits)
        logits = torch.mean(logits, dim=1)
        logits = torch.clamp(logits, 0.0001, 0.9999)
        logits = torch.log(logits / (1 - logits))
        feats = feats.view(feats.size(0), -1)
        fc_out = self.out(self.net2(self.net(feats)))
        return torch.sigmoid(logits + fc_out)


net = EnsembleNet()
net.eval()                                           # line 338
inp_v, logit_v = torch.rand(20, input_size), torch.rand(20, 3, n_cls)
counts = []
out_list = []
for i in range(0, 20, bs):                           # eval_batch's loop over grouper(data_all, bs)
    out_batch = net(inp_v[i:i + bs], logit_v[i:i + bs], True)
    out_list.append(out_batch)                       # line 298
    counts.append(reachable_saved(out_list))
out = torch.cat(out_list, dim=0)
print("saved tensors reachable from out_list after each batch:", counts)
assert all(b > a for a, b in zip(counts, counts[1:]))
assert out.requires_grad
with torch.no_grad():                                # the fix: nothing is kept
    assert not net(inp_v[:bs], logit_v[:bs]).requires_grad
print("OK: every batch's graph is kept until eval_batch returns; nothing backwards it")
