import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyDetector(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.cls_head = nn.Linear(32, num_classes)
        self.box_head = nn.Linear(32, 4)

    def forward(self, images, labels, boxes):
        feats = self.backbone(images)
        return {
            "loss_classifier": F.cross_entropy(self.cls_head(feats), labels),
            "loss_box_reg": F.smooth_l1_loss(self.box_head(feats), boxes),
        }


def train_one_epoch(model, optimizer, data_loader):
    model.train()
    for images, labels, boxes in data_loader:
        loss_dict = model(images, labels, boxes)
        optimizer.zero_grad()
        losses = sum(loss for loss in loss_dict.values())
        losses.backward()
        optimizer.step()


torch.manual_seed(0)
detector = TinyDetector()
batches = [(torch.randn(4, 10), torch.randint(0, 3, (4,)), torch.rand(4, 4)) for _ in range(3)]
train_one_epoch(detector, torch.optim.SGD(detector.parameters(), lr=0.01, momentum=0.9), batches)
