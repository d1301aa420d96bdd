import torch

from tagger import Tagger


def evaluate(model, batches):
    for x in batches:
        with torch.no_grad():
            logits = model(x)
            tags = model.crf.decode(logits)
        print(tags.tolist())


if __name__ == "__main__":
    evaluate(Tagger(), [torch.randn(6, 3, 8) for _ in range(2)])
