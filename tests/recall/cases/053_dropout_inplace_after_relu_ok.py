import torch
import torch.nn as nn


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout):
        super().__init__()
        layers = [
            nn.Linear(in_dim, hid_dim),
            nn.ReLU(),
            nn.Dropout(dropout, inplace=False),
            nn.Linear(hid_dim, out_dim),
        ]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x)


torch.manual_seed(0)
clf = SimpleClassifier(16, 32, 4, 0.5)
opt = torch.optim.Adamax(clf.parameters())
criterion = nn.CrossEntropyLoss()
features = torch.randn(8, 16)
labels = torch.randint(0, 4, (8,))
loss = criterion(clf(features), labels)
loss.backward()
opt.step()
