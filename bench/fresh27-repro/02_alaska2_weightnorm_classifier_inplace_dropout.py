"""fresh27 real: BloodAxe/Kaggle-2020-Alaska2 alaska2/models/res.py:89 (GS301).

`WeightNormClassifier` (the four heads of `SiameseImageAndResidualModelV2`, registered as
`rgb_res_sms_v2_tf_efficientnet_b2_ns` in alaska2/models/__init__.py) is

    nn.Sequential(weight_norm(nn.Linear(in_dim, hidden_dim), dim=None), nn.ReLU(),
                  nn.Dropout(dropout, inplace=True), weight_norm(nn.Linear(hidden_dim, out_dim), dim=None))

The in-place dropout overwrites the ReLU's output, which ReLU's backward reads: with a dropout above 0 in training
mode (train.py's `-d`, 0.2 in every script) the first backward raises. The later copy in alaska2/models/classifiers.py
puts `nn.Dropout(dropout, inplace=False)` first, which runs.
"""
import warnings

import torch
from torch import nn
from torch.nn.utils import weight_norm

warnings.filterwarnings("ignore")  # weight_norm's deprecation notice


class WeightNormClassifier(nn.Module):                      # res.py:83-96
    def __init__(self, in_dim, out_dim, hidden_dim, dropout):
        super().__init__()
        layers = [
            weight_norm(nn.Linear(in_dim, hidden_dim), dim=None),
            nn.ReLU(),
            nn.Dropout(dropout, inplace=True),
            weight_norm(nn.Linear(hidden_dim, out_dim), dim=None),
        ]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x)


class WeightNormClassifierLater(nn.Module):                 # classifiers.py (SiLU for timm's Swish)
    def __init__(self, in_dim, out_dim, hidden_dim, dropout):
        super().__init__()
        self.main = nn.Sequential(nn.Dropout(dropout, inplace=False),
                                  weight_norm(nn.Linear(in_dim, hidden_dim), dim=None), nn.SiLU(),
                                  weight_norm(nn.Linear(hidden_dim, out_dim), dim=None))

    def forward(self, x):
        return self.main(x)


torch.manual_seed(0)
rgb = torch.randn(8, 64)                                     # pooled encoder features

head = WeightNormClassifier(64, 4, 32, 0.2).train()
try:
    head(rgb).sum().backward()
except RuntimeError as e:
    print("dropout 0.2, training: backward raises:", str(e)[:110])
    assert "modified by an inplace operation" in str(e) and "Relu" in str(e)
else:
    raise AssertionError("backward did not raise")

WeightNormClassifier(64, 4, 32, 0.0).train()(rgb).sum().backward()      # p = 0: the dropout leaves it alone
WeightNormClassifierLater(64, 4, 32, 0.2).train()(rgb).sum().backward()
print("dropout 0 runs; classifiers.py's out-of-place version runs")
