# fresh12 GS516 x2 (huawei-noah/Speech-Backbones DiffVC/speaker_encoder/encoder/model.py:29-30, from
# CorentinJ/Real-Time-Voice-Cloning), judged harmless: `nn.Parameter(...).to(loss_device)` where every construction
# passes loss_device=torch.device("cpu") (train.py:35, inference.py:34; train.py's FIXME says the gradient is None
# when it is cuda: the bug GS516 describes, "whenever the call moves"). On CPU the .to() is a no-op that returns the
# Parameter itself, which is registered and trained.
import torch
from torch import nn


class SpeakerEncoder(nn.Module):
    def __init__(self, device, loss_device):
        super().__init__()
        self.linear = nn.Linear(4, 3).to(device)
        self.similarity_weight = nn.Parameter(torch.tensor([10.])).to(loss_device)
        self.similarity_bias = nn.Parameter(torch.tensor([-5.])).to(loss_device)


m = SpeakerEncoder(torch.device("cpu"), torch.device("cpu"))
names = [n for n, _ in m.named_parameters()]
assert "similarity_weight" in names and "similarity_bias" in names, names
print("registered:", names)
