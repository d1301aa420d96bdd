"""Reproduction for `all_softmax_cache_remainder_graph`: cpnota/autonomous-learning-library commit 94fe092f ("fix softmax memory leak").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `reinforce` concatenates the cached log-probs, keeps `self._log_probs = [log_probs[batch_size:]]`
(a slice of the concatenation, even when empty it carries the CatBackward node) and calls
`loss.backward(retain_graph=retain_graph or len(log_probs) > 0)`, which is always True; so every update's
graph, with its saved tensors, stays reachable from the cache and the chain grows with each update
(memory leak). The fix pops whole cached entries (`torch.cat(self._log_probs[:i])`, `self._log_probs =
self._log_probs[i:]`) and backpropagates with the caller's `retain_graph` (False).
"""

import torch

model = torch.nn.Linear(3, 2)


def graphs_reachable(tensors):
    """How many per-step policy forwards (SoftmaxBackward nodes) are reachable from the cache."""
    seen, stack, n = set(), [t.grad_fn for t in tensors], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        n += type(fn).__name__.startswith("SoftmaxBackward")
        stack.extend(f for f, _ in fn.next_functions)
    return n


def run(fixed, updates=5):
    log_probs_cache = []
    for _ in range(updates):
        probs = torch.softmax(model(torch.randn(2, 3)), dim=-1)
        dist = torch.distributions.Categorical(probs)
        log_probs_cache.append(dist.log_prob(dist.sample()))       # cache()
        errors = torch.randn(2)
        batch_size = len(errors)
        if fixed:
            log_probs = torch.cat(log_probs_cache[:1])
            log_probs_cache = log_probs_cache[1:]
            retain = False
        else:
            log_probs = torch.cat(log_probs_cache)
            log_probs_cache = [log_probs[batch_size:]]              # buggy: slice keeps the cat graph
            log_probs = log_probs[:batch_size]
            retain = False or len(log_probs) > 0                   # buggy: always True
        loss = -torch.dot(log_probs, errors) / batch_size
        loss.backward(retain_graph=retain)
    return log_probs_cache


buggy = run(False)
assert graphs_reachable(buggy) == 5        # every update's graph is still reachable (and retained)
fixed = run(True)
assert graphs_reachable(fixed) == 0

print("CONFIRMED")
