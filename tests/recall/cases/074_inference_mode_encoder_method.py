import torch
import torch.nn as nn


class FrozenEncoder:
    def __init__(self, backbone):
        self.backbone = backbone.eval()

    @torch.inference_mode()
    def encode(self, images):
        return self.backbone(images).flatten(1)


def train_linear_probe(encoder, head, loader, epochs=2):
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    for _ in range(epochs):
        for images, labels in loader:
            feats = encoder.encode(images)
            loss = criterion(head(feats), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return head


torch.manual_seed(0)
backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
data = [(torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))) for _ in range(3)]
probe = train_linear_probe(FrozenEncoder(backbone), nn.Linear(8, 5), data)
