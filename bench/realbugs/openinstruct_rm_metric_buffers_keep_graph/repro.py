"""Reproduction for `openinstruct_rm_metric_buffers_keep_graph`: allenai/open-instruct aff81017 (Fix memory leakr in reward modeling).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


def count_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        stack.extend(f for f, _ in n.next_functions)
    return len(seen)


def run(fixed, steps):
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    accum = 2
    losses = torch.zeros((accum,))          # made once, before the loop, as in reward_modeling.py
    chosen_rewards = torch.zeros((accum,))
    local_metrics = torch.zeros((5,))
    idx = 0
    for step in range(steps):
        chosen_reward = model(torch.randn(4, 8))
        loss = -torch.nn.functional.logsigmoid(chosen_reward).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        if fixed:
            with torch.no_grad():
                losses[idx] = loss
                chosen_rewards[idx] = chosen_reward.mean()
                local_metrics[1] = losses.mean()
        else:
            losses[idx] = loss                       # buggy: graph-carrying values into the long-lived buffers
            chosen_rewards[idx] = chosen_reward.mean()
            local_metrics[1] = losses.mean()
        idx = (idx + 1) % accum
    return losses, local_metrics


l10, m10 = run(False, 10)
l40, m40 = run(False, 40)
assert l40.requires_grad and m40.requires_grad
assert count_nodes(m40) > count_nodes(m10) + 50, (count_nodes(m10), count_nodes(m40))   # the chain grows with every step
lf, mf = run(True, 40)
assert not lf.requires_grad and not mf.requires_grad
print("CONFIRMED")
