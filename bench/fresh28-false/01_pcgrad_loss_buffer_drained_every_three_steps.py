"""GS404 false: cyingliu/CS224n-Efficient-MT-BERT multitask_classifier.py:529.

`losses = []` once before the epoch loop; with `--pcgrad` each step appends its task loss (round-robin over the three
tasks), and `if step % 3 == 0:` hands the list to `PCGrad.pc_backward` (one `backward(retain_graph=True)` per loss),
steps, and rebinds `losses = []`. `step` starts at 1, so the list holds at most three graphs and is emptied every third
step: nothing grows over the run. The PCGrad wrapper is the repository's, cut to what the loop uses.
"""
import gc
import weakref

import torch
import torch.nn.functional as F

torch.manual_seed(0)


class PCGrad:  # the repository's pcgrad.py, the parts pc_backward runs (projection left out: it only mixes grads)
    def __init__(self, optimizer):
        self._optim = optimizer

    def zero_grad(self):
        return self._optim.zero_grad(set_to_none=True)

    def step(self):
        return self._optim.step()

    def pc_backward(self, objectives):
        grads = []
        for obj in objectives:
            self._optim.zero_grad(set_to_none=True)
            obj.backward(retain_graph=True)
            grads.append([torch.zeros_like(p) if p.grad is None else p.grad.clone()
                          for g in self._optim.param_groups for p in g["params"]])
        idx = 0
        for group in self._optim.param_groups:
            for p in group["params"]:
                p.grad = torch.stack([g[idx] for g in grads]).mean(0)
                idx += 1


def train_multitask(args):
    heads = torch.nn.ModuleList([torch.nn.Linear(8, 3), torch.nn.Linear(8, 1), torch.nn.Linear(8, 1)])
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU())
    params = list(model.parameters()) + list(heads.parameters())
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    if args.pcgrad:
        optimizer = PCGrad(optimizer)
    task_id = 0
    step = 1
    losses = []  # loss buffer for pcgrad
    alive = []   # weak references to one tensor each step's graph saves
    max_alive = 0
    for epoch in range(args.epochs):
        for _ in range(10):
            if args.sample == "rr" or args.pcgrad:
                task_id = (task_id + 1) % 3
            x = torch.randn(5, 4)
            h = model(x)
            alive.append(weakref.ref(h))  # saved by the head's Linear: lives as long as the step's graph
            if task_id == 0:
                loss = F.cross_entropy(heads[0](h), torch.randint(0, 3, (5,)))
            else:
                loss = F.mse_loss(heads[task_id](h).squeeze(-1), torch.randn(5))
            del h
            if args.pcgrad:
                losses.append(loss)
            else:
                loss.backward()
            if args.pcgrad:
                if step % 3 == 0:
                    assert len(losses) == 3
                    optimizer.pc_backward(losses)
                    optimizer.step()
                    optimizer.zero_grad()
                    losses = []
            else:
                optimizer.step()
                optimizer.zero_grad()
            del loss
            gc.collect()
            max_alive = max(max_alive, sum(r() is not None for r in alive))
            step += 1
    return max_alive, len(alive)


class Args:
    pcgrad = True
    sample = "rr"
    epochs = 2


max_alive, steps = train_multitask(Args())
print("graphs alive at most:", max_alive, "of", steps, "steps")
assert max_alive <= 3, max_alive  # bounded by the buffer's size (3), not by the number of steps
