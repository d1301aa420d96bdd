"""fresh19 (false): GS301 xy-guo/MVSNet_pytorch `models/mvsnet.py:125, 129`.

    ref_volume = ref_feature.unsqueeze(2).repeat(1, 1, num_depth, 1, 1)
    volume_sum = ref_volume
    volume_sq_sum = ref_volume ** 2            # `**` saves ref_volume
    del ref_volume
    for src_fea, src_proj in zip(src_features, src_projs):
        warped_volume = homo_warping(...)
        if self.training:
            volume_sum = volume_sum + warped_volume          # out of place: rebinds volume_sum
            volume_sq_sum = volume_sq_sum + warped_volume ** 2
        else:
            volume_sum += warped_volume                      # line 125 ("temporal solution to save memory")
            volume_sq_sum += warped_volume.pow_(2)
    volume_variance = volume_sq_sum.div_(num_views).sub_(volume_sum.div_(num_views).pow_(2))   # line 129

The in-place branch runs only in eval mode, and every eval caller (`train.py`'s `@make_nograd_func test_sample`,
`eval.py`'s `with torch.no_grad()`) runs the model under no_grad, where `**` saves nothing. In training (3 views in
`train.py`) the loop rebinds `volume_sum` to a fresh sum before line 129, which an add never saves. Runs cleanly: a
training step with backward, and an eval pass under no_grad.
"""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, imgs, num_depth=3):
        features = [self.feature(img) for img in imgs]
        ref_feature, src_features = features[0], features[1:]
        num_views = len(imgs)
        ref_volume = ref_feature.unsqueeze(2).repeat(1, 1, num_depth, 1, 1)
        volume_sum = ref_volume
        volume_sq_sum = ref_volume ** 2
        del ref_volume
        for src_fea in src_features:
            warped_volume = src_fea.unsqueeze(2).repeat(1, 1, num_depth, 1, 1) * 0.9
            if self.training:
                volume_sum = volume_sum + warped_volume
                volume_sq_sum = volume_sq_sum + warped_volume ** 2
            else:
                volume_sum += warped_volume
                volume_sq_sum += warped_volume.pow_(2)
            del warped_volume
        return volume_sq_sum.div_(num_views).sub_(volume_sum.div_(num_views).pow_(2))


torch.manual_seed(0)
net = Net()
imgs = [torch.randn(1, 3, 5, 5) for _ in range(3)]
net.train()
net(imgs).mean().backward()
print("train step: backward ran")
net.eval()
with torch.no_grad():
    print("eval under no_grad:", net(imgs).shape)
