"""Reproduction for `tts_align_score_avg_graph`: mozilla/TTS commit 8dec2a9e ("fix memory leak duee to diagonal alingmnet score").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `alignment_diagonal_score` returns a 0-dim tensor computed from the model's attention alignments
(with history), and the training loop folds it into a running average (`avg = avg * iters + value; avg /= iters`),
so the average is a tensor whose grad_fn chains every step's graph for the whole epoch (memory leak);
the fix returns `.item()`.
"""

import torch

attn = torch.nn.Linear(5, 5)


def alignment_diagonal_score(alignments, fixed):
    s = alignments.max(dim=1)[0].mean(dim=1).mean(dim=0)
    return s.item() if fixed else s                # the fix adds .item()


def graphs_kept(t):
    """How many distinct per-step model graphs (addmm nodes) are reachable from t's grad_fn."""
    seen, stack, n = set(), [t.grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        n += type(fn).__name__.startswith("Addmm")
        stack.extend(f for f, _ in fn.next_functions)
    return n


def run(fixed):
    avg, iters = 0, 0                               # KeepAverage.add_value('avg_align_score', 0)
    for _ in range(4):                              # four training steps
        alignments = torch.softmax(attn(torch.randn(2 * 3, 5)), -1).view(2, 3, 5)
        loss = alignments.pow(2).sum()
        loss.backward()
        align_score = alignment_diagonal_score(alignments, fixed)
        avg = avg * iters + align_score             # KeepAverage.update_value
        iters += 1
        avg /= iters
    return avg


buggy = run(False)
assert torch.is_tensor(buggy) and buggy.grad_fn is not None
assert graphs_kept(buggy) == 4                      # every step's graph is still reachable
fixed = run(True)
assert isinstance(fixed, float)

print("CONFIRMED")
