"""fresh26 false: Britefury/cutmix-semisup-seg train_seg_semisup_mask_mt.py:438 (GS215).

gradsight says `logits_cons_tea` keeps the model's graph on one path, so `F.smooth_l1_loss(logits_cons_stu,
logits_cons_tea, reduce=False)` (cons_loss_fn == 'logits_smoothl1') trains through its target. The two paths:
mask-mix (line 363) `logits_cons_tea = logits_u0_tea * (1 - batch_mix_masks) + logits_u1_tea * batch_mix_masks`,
where `logits_u0_tea`/`logits_u1_tea` are `teacher_net(...).detach()` made under `torch.no_grad()` (354-356) and
`batch_mix_masks = mask_generator.torch_masks_from_params(batch_mask_params, ...)` is batch data (the
`mask_params` float array the collate function adds, moved `.to(torch_device)`; `BoxMaskGenerator.
torch_masks_from_params` returns it as is); cut (393) `teacher_net(batch_ux_tea).detach()` under no_grad. Neither
carries a graph (also when `teacher_net = student_net`, without a mean teacher). Run below: both paths with the
real statements; `logits_cons_tea.requires_grad` is False on each, and the loss's gradient reaches only the
student.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
student_net = nn.Conv2d(3, 4, 1)
for mean_teacher in (True, False):
    if mean_teacher:
        teacher_net = nn.Conv2d(3, 4, 1)
        for p in teacher_net.parameters():
            p.requires_grad = False
    else:
        teacher_net = student_net
    for mask_mix in (True, False):
        batch_mask_params = torch.from_numpy((torch.rand(2, 1, 6, 6) > 0.5).float().numpy())   # collate's mask_params
        batch_mix_masks = batch_mask_params.to('cpu')          # torch_masks_from_params returns t_params
        if mask_mix:
            batch_ux0_tea, batch_ux1_tea = torch.randn(2, 3, 6, 6), torch.randn(2, 3, 6, 6)
            batch_ux_stu_mixed = batch_ux0_tea * (1 - batch_mix_masks) + batch_ux1_tea * batch_mix_masks
            with torch.no_grad():
                logits_u0_tea = teacher_net(batch_ux0_tea).detach()
                logits_u1_tea = teacher_net(batch_ux1_tea).detach()
            logits_cons_stu = student_net(batch_ux_stu_mixed)
            logits_cons_tea = logits_u0_tea * (1 - batch_mix_masks) + logits_u1_tea * batch_mix_masks   # :363
        else:
            batch_ux_tea = torch.randn(2, 3, 6, 6)
            batch_ux_stu_cut = batch_ux_tea * batch_mix_masks
            with torch.no_grad():
                logits_cons_tea = teacher_net(batch_ux_tea).detach()                                 # :393
            logits_cons_stu = student_net(batch_ux_stu_cut)
        consistency_loss = F.smooth_l1_loss(logits_cons_stu, logits_cons_tea, reduce=False)      # :437-438
        print(f"mean_teacher={mean_teacher} mask_mix={mask_mix}: target requires grad:",
              logits_cons_tea.requires_grad)
        assert not logits_cons_tea.requires_grad and logits_cons_tea.grad_fn is None
        consistency_loss.sum(dim=1, keepdim=True).mean().backward()
