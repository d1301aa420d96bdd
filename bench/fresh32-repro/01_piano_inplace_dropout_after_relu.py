"""fresh32 real: bytedance/piano_transcription pytorch/models.py:149 (GS301).

`AcousticModelCRnn8Dropout.forward` (the acoustic stack of both trained models, `Regress_onset_offset_frame_velocity_CRNN`
and `Regress_pedal_CRNN`, four or three copies each) does

    x = F.relu(self.bn5(self.fc5(x).transpose(1, 2)).transpose(1, 2))      # line 148
    x = F.dropout(x, p=0.5, training=self.training, inplace=True)          # line 149
    (x, _) = self.gru(x)

ReLU saves its output for backward; the in-place dropout rewrites that output. pytorch/main.py trains with
`model.train()` then `loss.backward()`, so every training step raises under torch 2.13. The class below is the real
ConvBlock + AcousticModelCRnn8Dropout (statements copied, sizes reduced: the real midfeat is 1792 = 128 * 14 for 229
mel bins). Run A: train mode, backward raises "modified by an inplace operation ... output 0 of Relu".
Run B: eval mode (dropout off) backward runs; run C: the same forward with `inplace=False` trains.
(GitHub issues on other repositories report this pattern as new with later torch versions; which torch the authors
trained with in 2020 was not checked.)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, momentum):
        super(ConvBlock, self).__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels, momentum)
        self.bn2 = nn.BatchNorm2d(out_channels, momentum)

    def forward(self, input, pool_size=(2, 2), pool_type='avg'):
        x = F.relu_(self.bn1(self.conv1(input)))
        x = F.relu_(self.bn2(self.conv2(x)))
        if pool_type == 'avg':
            x = F.avg_pool2d(x, kernel_size=pool_size)
        return x


class AcousticModelCRnn8Dropout(nn.Module):
    def __init__(self, classes_num, midfeat, momentum, inplace=True):
        super(AcousticModelCRnn8Dropout, self).__init__()
        self.conv_block1 = ConvBlock(in_channels=1, out_channels=4, momentum=momentum)
        self.conv_block2 = ConvBlock(in_channels=4, out_channels=4, momentum=momentum)
        self.conv_block3 = ConvBlock(in_channels=4, out_channels=4, momentum=momentum)
        self.conv_block4 = ConvBlock(in_channels=4, out_channels=8, momentum=momentum)
        self.fc5 = nn.Linear(midfeat, 16, bias=False)
        self.bn5 = nn.BatchNorm1d(16, momentum=momentum)
        self.gru = nn.GRU(input_size=16, hidden_size=8, num_layers=2, bias=True, batch_first=True, dropout=0.,
                          bidirectional=True)
        self.fc = nn.Linear(16, classes_num, bias=True)
        self.inplace = inplace

    def forward(self, input):
        x = self.conv_block1(input, pool_size=(1, 2), pool_type='avg')
        x = F.dropout(x, p=0.2, training=self.training)
        x = self.conv_block2(x, pool_size=(1, 2), pool_type='avg')
        x = F.dropout(x, p=0.2, training=self.training)
        x = self.conv_block3(x, pool_size=(1, 2), pool_type='avg')
        x = F.dropout(x, p=0.2, training=self.training)
        x = self.conv_block4(x, pool_size=(1, 2), pool_type='avg')
        x = F.dropout(x, p=0.2, training=self.training)
        x = x.transpose(1, 2).flatten(2)
        x = F.relu(self.bn5(self.fc5(x).transpose(1, 2)).transpose(1, 2))
        x = F.dropout(x, p=0.5, training=self.training, inplace=self.inplace)   # line 149 (inplace=True)
        (x, _) = self.gru(x)
        x = F.dropout(x, p=0.5, training=self.training, inplace=False)
        output = torch.sigmoid(self.fc(x))
        return output


torch.manual_seed(0)
inp = torch.randn(2, 1, 10, 32)                      # (batch, 1, time_steps, mel_bins): 32 / 16 * 8 channels = 16
target = torch.rand(2, 10, 88)

model = AcousticModelCRnn8Dropout(88, 16, 0.01)
model.train()                                        # pytorch/main.py:251
loss = F.binary_cross_entropy(model(inp), target)
try:
    loss.backward()
    raised = None
except RuntimeError as e:
    raised = str(e)
print("A train mode:", raised[:200] if raised else "backward ran")
assert raised and "modified by an inplace operation" in raised and "output 0 of Relu" in raised

model.eval()
F.binary_cross_entropy(model(inp), target).backward()
print("B eval mode: backward ran (dropout is off)")

model2 = AcousticModelCRnn8Dropout(88, 16, 0.01, inplace=False)
model2.train()
F.binary_cross_entropy(model2(inp), target).backward()
assert model2.fc5.weight.grad is not None
print("C inplace=False: backward ran")
print("OK: every training step of the shipped models raises")
