"""fresh31 real: neuraloperator/physics_informed train_utils/train_3d.py:85 and :86 (GS404, two findings).

`train` (called by run_pino3d.py and train_PINO3d.py) makes `loss_dict = {'train_loss': 0.0, ..., 'test_l2': 0.0}`
per epoch and, per batch, after `total_loss.backward()` and `optimizer.step()`, runs
`loss_dict['test_l2'] += loss_l2` (85) and `loss_dict['train_loss'] += total_loss` (86): the tensors, with their
graphs, not `.item()`. Only after the epoch are they read, through `reduce_loss_dict` (which returns the dict
itself on one process) and `.item()`. So each total chains every batch's graph of the epoch (the backward freed
the saved buffers, but every node of every step's graph stays reachable, and the node count grows by a whole
forward per batch) until the next epoch's fresh dict. (`train_ic`/`train_f` at 84/87 do the same when the PDE
loss weights are non-zero; gradsight did not report them.) Run below: a small MLP stand-in for the FNO (same pad/reshape/slice) with
the file's loop; the nodes reachable from both entries grow at every batch, and both require grad.
"""
import torch
import torch.nn.functional as F


def nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


class LpLoss:
    def __call__(self, x, y):
        n = x.size(0)
        diff = torch.norm(x.reshape(n, -1) - y.reshape(n, -1), 2, 1)
        return torch.mean(diff / torch.norm(y.reshape(n, -1), 2, 1))


torch.manual_seed(0)
B, S, T = 2, 4, 3
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 1))
optimizer = torch.optim.Adam(model.parameters())
myloss = LpLoss()
zero = torch.zeros(1)
xy_weight, f_weight, ic_weight = 1.0, 0.0, 0.0
loader = [(torch.rand(B, S, S, T, 4), torch.rand(B, S, S, T)) for _ in range(4)]
for ep in range(2):
    loss_dict = {'train_loss': 0.0, 'train_ic': 0.0, 'train_f': 0.0, 'test_l2': 0.0}
    trace = []
    for x, y in loader:
        optimizer.zero_grad()
        x_in = F.pad(x, (0, 0, 0, 5), "constant", 0)
        out = model(x_in).reshape(B, S, S, T + 5)
        out = out[..., :-5]
        loss_l2 = myloss(out.view(B, S, S, T), y.view(B, S, S, T))
        loss_ic, loss_f = zero, zero
        total_loss = loss_l2 * xy_weight + loss_f * f_weight + loss_ic * ic_weight
        total_loss.backward()
        optimizer.step()
        loss_dict['train_ic'] += loss_ic
        loss_dict['test_l2'] += loss_l2                  # line 85
        loss_dict['train_loss'] += total_loss            # line 86
        loss_dict['train_f'] += loss_f
        trace.append((nodes(loss_dict['test_l2']), nodes(loss_dict['train_loss'])))
    print(f"epoch {ep}: nodes reachable from (test_l2, train_loss) per batch:", trace)
    for k in range(2):
        col = [r[k] for r in trace]
        assert all(b > a for a, b in zip(col, col[1:]))
    assert loss_dict['test_l2'].requires_grad and loss_dict['train_loss'].requires_grad
    print("   epoch values:", loss_dict['train_loss'].item() / len(loader), loss_dict['test_l2'].item() / len(loader))
print("OK: both totals chain every batch's graph for the epoch")
