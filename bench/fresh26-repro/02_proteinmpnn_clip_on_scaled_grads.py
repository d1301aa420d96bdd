"""fresh26 real: dauparas/ProteinMPNN training/training.py:151 (GS592).

With `--mixed_precision` (default True; `type=bool` makes any given value True) and `--gradient_norm > 0`
(default -1.0, clipping off; the option exists to turn it on), the loop runs
`scaler.scale(loss_av_smoothed).backward()`, then `torch.nn.utils.clip_grad_norm_(model.parameters(),
args.gradient_norm)`, then `scaler.step(optimizer); scaler.update()`, with no `scaler.unscale_(optimizer)`
before the clip. The gradients are still multiplied by the scale (65536 at the start), so the clip sees norms 65536
times too large: it clips at a true norm of gradient_norm / scale. Run below (CPU GradScaler, the same order of
calls, NoamOpt-like wrapper left out): the step taken with the clip as written is ~scale times smaller than
the step with `unscale_` first.
"""
import torch
from torch import nn

def one_step(unscale_first):
    torch.manual_seed(0)
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=65536.0)
    before = model.weight.detach().clone()
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss_av_smoothed = model(torch.randn(16, 8)).float().pow(2).mean()
    scaler.scale(loss_av_smoothed).backward()
    if unscale_first:
        scaler.unscale_(optimizer)
    total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)   # training.py:151, gradient_norm=1.0
    scaler.step(optimizer)
    scaler.update()
    return total_norm.item(), (model.weight.detach() - before).norm().item()

norm_as_written, step_as_written = one_step(False)
norm_fixed, step_fixed = one_step(True)
print(f"as written: norm seen by the clip {norm_as_written:.1f}, weight step {step_as_written:.2e}")
print(f"unscale_ first: norm seen by the clip {norm_fixed:.4f}, weight step {step_fixed:.2e}")
assert norm_as_written > 1000 * norm_fixed
assert step_as_written < step_fixed / 1000
