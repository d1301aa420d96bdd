import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.fc = nn.Linear(4, num_classes)

    def forward(self, x):
        return self.fc(x)


def make_net(num_classes=3):
    return Net(num_classes=num_classes)


def train(loader, model1, optimizer1, model2, optimizer2):
    for data, labels in loader:
        logits1 = model1(data)
        logits2 = model2(data)
        loss_1 = F.cross_entropy(logits1, labels)
        loss_2 = F.cross_entropy(logits2, labels)
        optimizer1.zero_grad()
        loss_1.backward()
        optimizer1.step()
        optimizer2.zero_grad()
        loss_2.backward()
        optimizer2.step()


def main(loader):
    clf1 = make_net(num_classes=3)
    optimizer1 = torch.optim.Adam(clf1.parameters(), lr=0.001)
    clf2 = make_net(num_classes=3)
    optimizer2 = torch.optim.Adam(clf2.parameters(), lr=0.001)
    train(loader, clf1, optimizer1, clf2, optimizer2)



if __name__ == "__main__":
    torch.manual_seed(0)
    main([(torch.randn(2, 4), torch.randint(0, 3, (2,))) for _ in range(3)])
    print("runs: each optimizer steps its own model; both backwards run")
