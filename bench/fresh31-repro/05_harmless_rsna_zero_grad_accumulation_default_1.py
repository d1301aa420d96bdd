"""fresh31 harmless: okotaku/kaggle_rsna2019_3rd_solution src/trainer.py:17 (GS517).

`train_one_epoch(model, train_loader, criterion, optimizer, device, accumulation_steps=1, ...)` runs
`optimizer.zero_grad()` at the top of every iteration (line 17), `loss.backward()`, and
`if (step + 1) % accumulation_steps == 0: optimizer.step(); optimizer.zero_grad()`. The claim is true of the
function: with `accumulation_steps > 1` each step would see the last batch's gradient alone (run A). But no caller
passes `accumulation_steps`: the 17 experiment scripts under exp/ call `train_one_epoch(model, train_loader,
criterion, optimizer, device)` (exp32 adds `any_drop=True`, exp10 `new_type=True`), and no other file of the repository
names the parameter. With the default 1 the modulo is always 0, the step runs every iteration and sees exactly
that batch's gradient: the same updates as the correct accumulation loop (run B).
"""
import torch


def make():
    torch.manual_seed(0)
    return torch.nn.Linear(3, 1)


data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)]
crit = torch.nn.MSELoss()


def file_loop(model, k):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, (x, y) in enumerate(data):
        opt.zero_grad()                                   # line 17
        loss = crit(model(x), y)
        loss.backward()
        if (step + 1) % k == 0:
            opt.step()
            opt.zero_grad()
    return model.weight.detach().clone()


def accumulating_loop(model, k):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad()
    for step, (x, y) in enumerate(data):
        loss = crit(model(x), y)
        loss.backward()
        if (step + 1) % k == 0:
            opt.step()
            opt.zero_grad()
    return model.weight.detach().clone()


a_file, a_acc = file_loop(make(), 2), accumulating_loop(make(), 2)
print("A (accumulation_steps=2, never passed):", (a_file - a_acc).abs().max().item())
assert not torch.allclose(a_file, a_acc)               # the claim: wrong with k > 1
b_file, b_acc = file_loop(make(), 1), accumulating_loop(make(), 1)
print("B (accumulation_steps=1, every caller):", (b_file - b_acc).abs().max().item())
assert torch.equal(b_file, b_acc)                      # the shipped use: identical updates
print("OK: the flagged zero_grad only matters for a value no caller passes")
