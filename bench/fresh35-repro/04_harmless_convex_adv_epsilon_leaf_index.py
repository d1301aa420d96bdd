"""fresh35 harmless: locuslab/convex_adversarial examples/mnist_epsilon.py:114, 116 (GS404 x2).

Per batch the script searches the certified radius and then appends `epsilon[y==out]` to `correct` / `incorrect`,
which it saves at the end. `epsilon` is always a fresh leaf (`Variable(..., requires_grad=True)`, or
`Variable((epsilon - ...).data, requires_grad=True)`), so each appended tensor's graph is a single IndexBackward
node on that batch-sized leaf: the DualNetBounds graph is not kept. Memory grows with the lists, which is what the
script is for; the graph adds one batch-sized vector per batch.
"""
import torch

torch.manual_seed(0)
w = torch.nn.Linear(4, 3)
correct, incorrect = [], []
for j in range(3):
    X, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    out = w(X).data.max(1)[1]
    epsilon = (0.1 * torch.ones(8)).requires_grad_(True)
    for i in range(2):
        f_max = (w(X * epsilon.unsqueeze(1)).max(1)[0] - 1).abs()   # stands in for the dual bound
        f_max.sum().backward()
        epsilon0 = (epsilon - 0.5 * (f_max / epsilon.grad)).data.requires_grad_(True)
        epsilon = epsilon0
        del f_max
    if (y == out).sum() > 0:
        correct.append(epsilon[y == out])
    if (y != out).sum() > 0:
        incorrect.append(epsilon[y != out])


def nodes(t):
    seen, todo = set(), [t.grad_fn]
    while todo:
        n = todo.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        todo += [m for m, _ in n.next_functions]
    return seen


for t in correct + incorrect:
    assert len(nodes(t)) == 2, nodes(t)        # IndexBackward -> AccumulateGrad(epsilon leaf)
torch.cat(correct, 0)
print("OK: each kept entry holds only an index node on a batch-sized leaf")
