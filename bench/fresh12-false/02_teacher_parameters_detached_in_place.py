# fresh12 false shape 2 (GS418, fanyun-sun/InfoGraph semi-supervised/mean_teacher.py:70): a mean teacher whose
# parameters are detached in place once (`for param in teacher_model.parameters(): param.detach_()`, the mean-teacher
# idiom): they no longer require grad, so the teacher's output carries no graph and the loss against it trains only
# the student. gradsight ignored the loop (and the same loop with `param.requires_grad = False` or
# `param.requires_grad_(False)`) and took the teacher's output for a target through an untrained network.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
teacher_model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
for param in teacher_model.parameters():
    param.detach_()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for step in range(3):
    x = torch.randn(16, 4)
    optimizer.zero_grad()
    pred = model(x)
    teacher_pred = teacher_model(x)
    loss = F.mse_loss(pred, teacher_pred)
    loss.backward()
    optimizer.step()
assert not teacher_pred.requires_grad
assert all(p.grad is None and not p.requires_grad for p in teacher_model.parameters())
print("ok: teacher_pred.requires_grad =", teacher_pred.requires_grad)
