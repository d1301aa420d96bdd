"""fresh25 real: deep-learning-with-pytorch/dlwpt-code p2ch12/training.py:232 and p2ch14/training.py:260 (GS404).

`doTraining` makes `trnMetrics_g = torch.zeros(METRICS_SIZE, len(train_dl.dataset))` once per epoch and hands it,
per batch, to `computeBatchLoss`, which writes `metrics_g[METRICS_PRED_NDX, start:end] = probability_g[:,1]` (the
model's softmax output, graph alive) and `metrics_g[METRICS_LOSS_NDX, start:end] = loss_g` (the per-sample loss,
graph alive) and returns `loss_g.mean()`; `doTraining` then runs `loss_var.backward(); self.optimizer.step()`. The
slice writes make the metrics tensor a node chain (CopySlices) that holds every batch's graph for the whole epoch;
`doTraining` returns `trnMetrics_g.to('cpu')` (still with the chain) into `trnMetrics_t`, kept by `main` until the
next epoch's returns. p2ch11 of the same book writes `probability_g[:,1].detach()` and `loss_g.detach()`; p2ch13
writes under `torch.no_grad()`. Run below with the same statements: the nodes reachable from the metrics tensor
grow with every batch, and the softmax output each batch saved (not on the loss's path, so its backward never
frees it) stays alive for the epoch.
"""
import torch
from torch import nn

torch.manual_seed(0)
METRICS_LABEL_NDX, METRICS_PRED_NDX, METRICS_PRED_P_NDX, METRICS_LOSS_NDX, METRICS_SIZE = 0, 1, 2, 3, 4


class LunaModel(nn.Module):                     # p2ch12/model.py: ... head_linear, head_softmax
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 16), nn.ReLU())
        self.head_linear = nn.Linear(16, 2)
        self.head_softmax = nn.Softmax(dim=1)

    def forward(self, x):
        linear_output = self.head_linear(self.body(x))
        return linear_output, self.head_softmax(linear_output)


def softmax_results_kept(t):
    """The SoftmaxBackward nodes reachable from t whose saved output is still held (not freed by a backward)."""
    seen, stack, kept = set(), [t.grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        if type(fn).__name__.startswith("SoftmaxBackward"):
            kept += fn._saved_result.numel() > 0
        stack.extend(f for f, _ in fn.next_functions)
    return kept


def n_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


model = LunaModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.99)
batch_size, n_batches = 4, 6


def computeBatchLoss_ch12(batch_ndx, input_t, label_t, metrics_g):
    logits_g, probability_g = model(input_t)
    loss_g = nn.CrossEntropyLoss(reduction='none')(logits_g, label_t[:, 1])
    start_ndx = batch_ndx * batch_size
    end_ndx = start_ndx + label_t.size(0)
    metrics_g[METRICS_LABEL_NDX, start_ndx:end_ndx] = label_t[:, 1]
    metrics_g[METRICS_PRED_NDX, start_ndx:end_ndx] = probability_g[:, 1]      # p2ch12:290
    metrics_g[METRICS_LOSS_NDX, start_ndx:end_ndx] = loss_g                   # p2ch12:291
    return loss_g.mean()


def computeBatchLoss_ch14(batch_ndx, input_t, label_t, metrics_g):
    logits_g, probability_g = model(input_t)
    loss_g = nn.functional.cross_entropy(logits_g, label_t[:, 1], reduction="none")
    start_ndx = batch_ndx * batch_size
    end_ndx = start_ndx + label_t.size(0)
    _, predLabel_g = torch.max(probability_g, dim=1, keepdim=False, out=None)
    metrics_g[METRICS_LABEL_NDX, start_ndx:end_ndx] = label_t[:, 1]
    metrics_g[METRICS_PRED_NDX, start_ndx:end_ndx] = predLabel_g
    metrics_g[METRICS_PRED_P_NDX, start_ndx:end_ndx] = probability_g[:, 1]    # p2ch14:330
    metrics_g[METRICS_LOSS_NDX, start_ndx:end_ndx] = loss_g                   # p2ch14:332
    return loss_g.mean()


def doTraining(computeBatchLoss):
    model.train()
    trnMetrics_g = torch.zeros(METRICS_SIZE, batch_size * n_batches)
    counts = []
    for batch_ndx in range(n_batches):
        optimizer.zero_grad()
        input_t = torch.randn(batch_size, 32)
        label_t = nn.functional.one_hot(torch.randint(0, 2, (batch_size,)), 2)
        loss_var = computeBatchLoss(batch_ndx, input_t, label_t, trnMetrics_g)   # p2ch12:232 / p2ch14:260
        loss_var.backward()
        optimizer.step()
        counts.append(n_nodes(trnMetrics_g))
    return trnMetrics_g.to('cpu'), counts


for name, fn in (("p2ch12", computeBatchLoss_ch12), ("p2ch14", computeBatchLoss_ch14)):
    trnMetrics_t, counts = doTraining(fn)
    print(name, "nodes reachable from trnMetrics_g after each batch:", counts,
          "| returned tensor requires grad:", trnMetrics_t.requires_grad)
    assert trnMetrics_t.requires_grad
    assert all(b > a for a, b in zip(counts, counts[1:]))
    kept = softmax_results_kept(trnMetrics_t)
    print(name, "softmax outputs still saved in the chain at the epoch's end:", kept, "of", n_batches)
    assert kept == n_batches
