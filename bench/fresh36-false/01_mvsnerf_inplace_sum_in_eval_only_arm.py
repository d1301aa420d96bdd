"""fresh36 false 01 (GS301): apchenstu/mvsnerf models.py:883.

MVSNet.build_volume_costvar_img (called by MVSNet.forward):
    ref_volume = ref_feats.unsqueeze(2).repeat(1, 1, D, 1, 1)
    volume_sum = ref_volume
    volume_sq_sum = ref_volume ** 2                         # line 865: pow saves ref_volume
    for i, (...) in enumerate(zip(imgs[1:], src_feats, proj_mats)):
        warped_volume, grid = homo_warp(src_feat, proj_mat, depth_values, pad=pad)
        ...
        if self.training:
            volume_sum = volume_sum + warped_volume
            volume_sq_sum = volume_sq_sum + warped_volume ** 2
        else:
            volume_sum += warped_volume                      # line 883
            volume_sq_sum += warped_volume.pow_(2)
The in-place arm runs only in eval mode.  Every call of MVSNet in the repository (train_mvs_nerf_pl.py:113
training_step; :182-195 validation_step, which calls `self.MVSNet.train()` then runs it under `torch.no_grad()`;
the two finetuning scripts and both notebooks, each `MVSNet.train()` then `with torch.no_grad():`) is in train
mode; nothing puts MVSNet in eval mode, and no eval-mode call is followed by a backward.
The function below is the file's, with homo_warp replaced by a differentiable stand-in of the same shapes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def homo_warp(src_feat, proj_mat, depth_values, src_grid=None, pad=0):
    B, C, H, W = src_feat.shape
    D = depth_values.shape[1]
    scale = (1.0 + depth_values.view(1, 1, D, 1, 1) * proj_mat.sum())
    warped = src_feat.unsqueeze(2) * scale
    grid = torch.linspace(-1.2, 1.2, H * W * D * 2).view(1, D, H, W, 2).expand(B, -1, -1, -1, -1) if src_grid is None else src_grid
    return warped, grid


class MVSNetPart(nn.Module):
    def build_volume_costvar_img(self, imgs, feats, proj_mats, depth_values, pad=0):
        B, V, C, H, W = feats.shape
        D = depth_values.shape[1]
        ref_feats, src_feats = feats[:, 0], feats[:, 1:]
        src_feats = src_feats.permute(1, 0, 2, 3, 4)
        proj_mats = proj_mats[:, 1:]
        proj_mats = proj_mats.permute(1, 0, 2, 3)
        if pad > 0:
            ref_feats = F.pad(ref_feats, (pad, pad, pad, pad), "constant", 0)
        img_feat = torch.empty((B, 9 + 32, D, *ref_feats.shape[-2:]), device=feats.device, dtype=torch.float)
        imgs = F.interpolate(imgs.view(B * V, *imgs.shape[2:]), (H, W), mode='bilinear', align_corners=False).view(B, V, -1, H, W).permute(1, 0, 2, 3, 4)
        img_feat[:, :3, :, pad:H + pad, pad:W + pad] = imgs[0].unsqueeze(2).expand(-1, -1, D, -1, -1)
        ref_volume = ref_feats.unsqueeze(2).repeat(1, 1, D, 1, 1)
        volume_sum = ref_volume
        volume_sq_sum = ref_volume ** 2
        del ref_feats
        in_masks = torch.ones((B, V, D, H + pad * 2, W + pad * 2), device=volume_sum.device)
        for i, (src_img, src_feat, proj_mat) in enumerate(zip(imgs[1:], src_feats, proj_mats)):
            warped_volume, grid = homo_warp(src_feat, proj_mat, depth_values, pad=pad)
            img_feat[:, (i + 1) * 3:(i + 2) * 3], _ = homo_warp(src_img, proj_mat, depth_values, src_grid=grid, pad=pad)
            grid = grid.reshape(B, 1, D, H + pad * 2, W + pad * 2, 2)
            in_mask = ((grid > -1.0) * (grid < 1.0))
            in_mask = (in_mask[..., 0] * in_mask[..., 1])
            in_masks[:, i + 1] = in_mask.float()
            if self.training:
                volume_sum = volume_sum + warped_volume
                volume_sq_sum = volume_sq_sum + warped_volume ** 2
            else:
                volume_sum += warped_volume
                volume_sq_sum += warped_volume.pow_(2)
            del warped_volume, src_feat, proj_mat
        del src_feats, proj_mats
        count = 1.0 / torch.sum(in_masks, dim=1, keepdim=True)
        img_feat[:, -32:] = volume_sq_sum * count - (volume_sum * count) ** 2
        del volume_sq_sum, volume_sum, count
        return img_feat, in_masks


torch.manual_seed(0)
B, V, H, W, D = 1, 3, 4, 4, 5
conv = nn.Conv2d(3, 32, 3, 1, 1)                       # stand-in for the feature net
net = MVSNetPart()
imgs = torch.rand(B, V, 3, H, W)
proj_mats = torch.rand(B, V, 3, 4)
depth_values = torch.linspace(2.0, 6.0, D).unsqueeze(0)


def run():
    feats = conv(imgs.view(B * V, 3, H, W)).view(B, V, 32, H, W)
    return net.build_volume_costvar_img(imgs, feats, proj_mats, depth_values)


# A: training_step (train mode, grad on): out-of-place arm, backward runs
net.train()
img_feat, _ = run()
img_feat.sum().backward()
assert conv.weight.grad is not None
print("A: train mode + backward: runs")
# B: validation_step / finetuning / notebooks: .train() then no_grad
with torch.no_grad():
    run()
print("B: train mode under no_grad: runs")
# C: eval mode (no code in the repository does this) under no_grad: the in-place arm runs, nothing is saved
net.eval()
with torch.no_grad():
    a, _ = run()
net.train()
with torch.no_grad():
    b, _ = run()
assert torch.allclose(a, b)
print("C: eval mode under no_grad: in-place arm runs, same result")
# D: what the rule describes: eval mode, grad on, then backward (never done in the repository)
net.eval()
try:
    img_feat, _ = run()
    img_feat.sum().backward()
    raise SystemExit("expected the in-place error")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e)
    print("D: eval mode + grad + backward raises (no caller does this)")
print("OK: on every path the repository runs, line 883 raises nothing")
