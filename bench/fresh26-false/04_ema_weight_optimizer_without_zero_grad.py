"""fresh26 false: Britefury/cutmix-semisup-seg GS503 x5: toy2d_train.py:409, train_seg_semisup_aug_mt.py:398,
train_seg_semisup_ict.py:391, train_seg_semisup_mask_mt.py:459, train_seg_semisup_vat_mt.py:464.

Each loop runs `student_optim.zero_grad()`, the supervised and unsupervised backwards, `student_optim.step()`,
then `if teacher_optim is not None: teacher_optim.step()`. `teacher_optim` (`teacher_optimizer` in toy2d) is
`optim_weight_ema.EMAWeightOptimizer(teacher_net, student_net, alpha)`: a plain class whose `step()` does
`tgt_p.mul_(alpha); tgt_p.add_(src_p * (1 - alpha))` over the two nets' state_dict float tensors. It reads no
gradient and has no `zero_grad`; the teacher's parameters are set `requires_grad = False` right before it is made,
and the teacher's outputs are `.detach()`ed / made under `no_grad`, so no backward ever writes a teacher gradient.
There is nothing to zero. Run below: the real class and the loop's order of calls: after 5 steps every teacher
`.grad` is None and the teacher equals the exact EMA of the student's weights.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class EMAWeightOptimizer (object):
    def __init__(self, target_net, source_net, ema_alpha):
        self.target_net = target_net
        self.source_net = source_net
        self.ema_alpha = ema_alpha
        self.target_params = [p for p in target_net.state_dict().values() if p.dtype == torch.float]
        self.source_params = [p for p in source_net.state_dict().values() if p.dtype == torch.float]
        for tgt_p, src_p in zip(self.target_params, self.source_params):
            tgt_p[...] = src_p[...]

    def step(self):
        one_minus_alpha = 1.0 - self.ema_alpha
        for tgt_p, src_p in zip(self.target_params, self.source_params):
            tgt_p.mul_(self.ema_alpha)
            tgt_p.add_(src_p * one_minus_alpha)


torch.manual_seed(0)
Network = lambda: nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
student_net = Network()
teacher_net = Network()
for param in teacher_net.parameters():
    param.requires_grad = False
teacher_optimizer = EMAWeightOptimizer(teacher_net, student_net, ema_alpha=0.99)
student_optimizer = torch.optim.Adam(student_net.parameters(), lr=1e-2)
ema = [p.detach().clone() for p in student_net.parameters()]
for step in range(5):
    batch_X, batch_y, batch_u_X = torch.randn(8, 2), torch.randint(0, 2, (8,)), torch.randn(8, 2)
    student_optimizer.zero_grad()
    sup_loss = F.cross_entropy(student_net(batch_X), batch_y)
    teacher_unsup_logits = teacher_net(batch_u_X).detach()
    student_unsup_logits = student_net(batch_u_X + 0.1 * torch.randn_like(batch_u_X))
    d = F.softmax(student_unsup_logits, 1) - F.softmax(teacher_unsup_logits, 1)
    loss = sup_loss + (d * d).mean()
    loss.backward()                                    # toy2d_train.py:409
    student_optimizer.step()
    if teacher_optimizer is not None:
        teacher_optimizer.step()
    ema = [0.99 * e + 0.01 * p.detach() for e, p in zip(ema, student_net.parameters())]
print("teacher grads:", [p.grad for p in teacher_net.parameters()])
assert all(p.grad is None for p in teacher_net.parameters())
assert all(torch.allclose(e, t) for e, t in zip(ema, teacher_net.parameters()))
print("the teacher is the exact EMA of the student; no gradient ever reaches it")
