# fresh11 false shape 1 (GS201, leoxiaobin/deep-high-resolution-net.pytorch demo/demo.py:102, demo/inference.py:79):
# an entry of a detection model's output dict read by a string key. torchvision's detectors return, in eval mode,
# a list of dicts whose "labels" are int64 (RoIHeads.postprocess_detections builds them from torch.arange), so
# `pred[0]["labels"].cpu().numpy()` runs even with grad mode on; only "boxes"/"scores" need `.detach()`.
# `Detector` stands in for torchvision's Faster R-CNN (not installed here) with the same output structure.
import torch
import torch.nn as nn


def get_person_classes(model, images):
    model.eval()
    pred = model(images)
    classes = list(pred[0]["labels"].cpu().numpy())
    scores = list(pred[0]["scores"].detach().cpu().numpy())
    return classes, scores


class Detector(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.head = nn.Linear(8, num_classes)

    def forward(self, images):
        results = []
        for feats in images:
            scores = self.head(feats).softmax(-1)
            labels = torch.arange(scores.shape[-1]).view(1, -1).expand_as(scores)
            results.append({"scores": scores[:, 1:].reshape(-1), "labels": labels[:, 1:].reshape(-1)})
        return results


if __name__ == "__main__":
    models = {"detector": Detector}
    print(get_person_classes(models["detector"](), [torch.randn(3, 8)]))
