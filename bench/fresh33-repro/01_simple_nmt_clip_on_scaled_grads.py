"""fresh33 real: kh-kim/simple-nmt simple_nmt/trainer.py:83, simple_nmt/lm_trainer.py:78,
simple_nmt/dual_trainer.py:224 (GS592 x3).

On a GPU (`--gpu_id >= 0`) with AMP on (the default: only `--off_autocast` turns it off) each trainer runs
`engine.scaler.scale(backward_target).backward()`, then `torch_utils.clip_grad_norm_(engine.model.parameters(),
engine.config.max_grad_norm)` (default 5.0), then `engine.scaler.step(engine.optimizer); engine.scaler.update()`,
with no `scaler.unscale_(optimizer)` before the clip (dual_trainer.py does the same per model with its own scaler).
The clip sees the gradients still multiplied by the scale (65536 at the start), so it clips at a true norm of
max_grad_norm / scale. With the default optimizer (SGD, `--lr 1.0`; README: "max_grad_norm 5" for SGD) the step is
~scale times smaller than intended. Run below: CPU GradScaler, the trainer's order of calls, SGD lr=1, clip 5.
"""
import torch
from torch import nn
import torch.nn.utils as torch_utils


def one_step(unscale_first):
    torch.manual_seed(0)
    model = nn.Linear(32, 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    scaler = torch.amp.GradScaler("cpu")          # init_scale 65536, as torch.cuda.amp.GradScaler()
    crit = nn.NLLLoss(reduction="sum")
    before = model.weight.detach().clone()
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y_hat = torch.log_softmax(model(torch.randn(64, 32)).float(), -1)
        loss = crit(y_hat, torch.randint(0, 10, (64,)))
        backward_target = loss.div(64)
    scaler.scale(backward_target).backward()
    if unscale_first:
        scaler.unscale_(optimizer)
    total = torch_utils.clip_grad_norm_(model.parameters(), 5.0)     # trainer.py:83, max_grad_norm=5
    scaler.step(optimizer)
    scaler.update()
    return total.item(), (model.weight.detach() - before).norm().item()


n_written, s_written = one_step(False)
n_fixed, s_fixed = one_step(True)
print(f"as written: norm seen by the clip {n_written:.1f}, weight step {s_written:.2e}")
print(f"unscale_ first: norm seen by the clip {n_fixed:.3f}, weight step {s_fixed:.2e}")
assert n_written > 1000 * n_fixed
assert s_written < s_fixed / 1000
