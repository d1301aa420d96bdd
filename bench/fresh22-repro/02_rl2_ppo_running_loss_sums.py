"""fresh22 real: dongminlee94/meta-learning-for-everyone src/meta_rl/rl2/algorithm/ppo.py:142, 143, 144 (GS404).

train_model: for num_epochs (10 in both configs) x num_mini_batch mini-batches: backward, step, then
`sum_total_loss_mini_batch += total_loss` (and the policy and value losses); the per-epoch sums are added into
`sum_total_loss` etc., read only by `.item()` at the end. Every mini-batch's loss graph (its nodes; the saved
buffers are freed by backward) stays reachable from the sums until train_model returns: one more graph per
mini-batch, epochs x mini-batches per call. Run below: the node count reachable from the sum grows each step.
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
vf = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
pi = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 2))
opt = torch.optim.Adam(list(vf.parameters()) + list(pi.parameters()), lr=1e-3)


def n_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


counts = []
sum_total_loss = 0
for _ in range(2):                                   # num_epochs
    sum_total_loss_mini_batch = 0
    for _ in range(4):                               # mini-batches
        x, ret, adv, old_lp = torch.randn(32, 8), torch.randn(32, 1), torch.randn(32, 1), torch.randn(32, 1)
        value_loss = F.mse_loss(vf(x).view(-1, 1), ret)
        new_lp = torch.log_softmax(pi(x), -1)[:, :1]
        ratio = torch.exp(new_lp.view(-1, 1) - old_lp)
        policy_loss = -torch.min(ratio * adv, torch.clamp(ratio, 0.7, 1.3) * adv).mean()
        total_loss = policy_loss + 0.5 * value_loss
        opt.zero_grad()
        total_loss.backward()
        opt.step()
        sum_total_loss_mini_batch += total_loss       # ppo.py:142
        counts.append(n_nodes(sum_total_loss_mini_batch))
    sum_total_loss += sum_total_loss_mini_batch / 4   # ppo.py:146
print("nodes reachable from the running sums:", counts, "-> at return:", n_nodes(sum_total_loss))
assert counts[:4] == sorted(counts[:4]) and counts[3] > 3 * counts[0]   # grows within each epoch
assert n_nodes(sum_total_loss) > counts[-1]          # the epoch totals chain both epochs' graphs
