"""Reproduction for `wavenet_incremental_outputs_graph`: r9y9/wavenet_vocoder commit 5b54777992 ("fix the oom problem of synthesis and fix dependecy of deep-voice3 (#55)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `incremental_forward` (called for synthesis/evaluation in grad mode) appends each step's output `x`
with its graph to `outputs` and feeds `outputs[-1]` back as the next step's input, so the graph of every
earlier step stays reachable from the latest output and memory grows with the number of samples (OOM during
synthesis); the fix appends `x.data` (no history), so each step's graph is freed.
"""

import torch
import torch.nn.functional as F

torch.manual_seed(0)
first_conv = torch.nn.Linear(8, 16)          # stands for the 1x1 first convolution
last_conv = torch.nn.Linear(16, 8)


def graph_size(t):
    seen, todo = set(), [t.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        todo.extend(nxt for nxt, _ in fn.next_functions)
    return len(seen)


def incremental_forward(T, fixed):
    outputs = []
    current_input = torch.zeros(1, 8)
    current_input[:, 0] = 1
    for t in range(T):
        if t > 0:
            current_input = outputs[-1]
        x = last_conv(torch.relu(first_conv(current_input)))
        x = F.softmax(x, dim=1)
        sample = int(torch.multinomial(x.detach(), 1))
        x.zero_()                                   # one-hot of the sampled class, as in the original
        x[:, sample] = 1.0
        outputs += [x.data] if fixed else [x]       # fix: x.data / buggy: x with its graph
    return outputs


buggy_10 = incremental_forward(10, fixed=False)
buggy_40 = incremental_forward(40, fixed=False)
assert graph_size(buggy_40[-1]) > 3 * graph_size(buggy_10[-1])   # buggy: the kept graph grows with every step

fixed_40 = incremental_forward(40, fixed=True)
assert all(o.grad_fn is None and not o.requires_grad for o in fixed_40)

print("CONFIRMED")
