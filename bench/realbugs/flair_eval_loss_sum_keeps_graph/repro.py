"""Reproduction for `flair_eval_loss_sum_keeps_graph`: zalandoresearch/flair commit c6211f29 ("GH-108: Use torch.no_grad in evaluation method").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the evaluation loop runs the model in grad mode and sums `eval_loss += loss`, so the running
sum is a tensor whose grad_fn holds every evaluation batch's graph (with its saved activations) until
the end of evaluation (the out-of-memory of GH-108); the fix runs the loop under `torch.no_grad()`.
"""

import torch

model = torch.nn.Linear(6, 3)


def graphs_kept(t):
    """How many distinct per-batch model graphs (addmm nodes) are reachable from t's grad_fn."""
    seen, stack, n = set(), [t.grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        n += type(fn).__name__.startswith("Addmm")
        stack.extend(f for f, _ in fn.next_functions)
    return n


def evaluate(batches):
    eval_loss = 0
    for x, y in batches:
        scores = model(x)
        loss = torch.nn.functional.cross_entropy(scores, y)
        eval_loss += loss
    return eval_loss / len(batches)


batches = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(5)]
buggy = evaluate(batches)                           # grad mode (buggy)
assert buggy.grad_fn is not None
assert graphs_kept(buggy) == 5                      # all five batches' graphs are alive at once
with torch.no_grad():                               # the fix
    fixed = evaluate(batches)
assert fixed.grad_fn is None and not fixed.requires_grad

print("CONFIRMED")
