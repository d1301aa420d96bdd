"""GS390 ground truth on real library code: MONAI's GradCAM (monai 1.6.1, `ModelWithHooks` registers
`register_full_backward_hook` on the caller's target layer and stores `grad_output[0]`) with MONAI's own DenseNet121.
Its documented target `class_layers.relu` works (MONAI turns that module's own `inplace` off); the last feature layer
`features.norm5` (followed by the in-place `class_layers.relu`) and a dense layer's `norm1` raise "Output 0 of
BackwardHookFunction is a view and is being modified inplace".

    pip install --no-deps --target /tmp/norule4-pkgs monai   # torch stays the venv's
    .venv/bin/python bench/gs390_monai_probe.py
"""
import sys
sys.path.append("/tmp/norule4-pkgs")
import torch
from monai.networks.nets import DenseNet121
from monai.visualize import GradCAM

model = DenseNet121(spatial_dims=2, in_channels=1, out_channels=3)
x = torch.rand(1, 1, 64, 64)
cam = GradCAM(nn_module=model, target_layers="class_layers.relu")   # MONAI's documented choice
print("class_layers.relu:", cam(x=x).shape)
for layer in ("features.norm5", "features.denseblock4.denselayer16.layers.norm1"):
    model = DenseNet121(spatial_dims=2, in_channels=1, out_channels=3)
    try:
        print(layer, GradCAM(nn_module=model, target_layers=layer)(x=x).shape)
    except RuntimeError as e:
        print(layer, "RAISES:", str(e)[:90])
