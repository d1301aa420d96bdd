import torch.nn as nn

from crf import CRF


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 5)
        self.crf = CRF(5)

    def forward(self, x):
        return self.fc(x)
