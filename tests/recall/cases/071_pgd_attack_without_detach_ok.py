import torch
import torch.nn as nn


class PGD:
    def __init__(self, model, eps=8 / 255, alpha=2 / 255, steps=5):
        self.model = model
        self.eps = eps
        self.alpha = alpha
        self.steps = steps
        self.loss_fn = nn.CrossEntropyLoss()

    def __call__(self, images, labels):
        adv_images = images.clone().detach()
        for _ in range(self.steps):
            adv_images.requires_grad = True
            cost = self.loss_fn(self.model(adv_images), labels)
            grad = torch.autograd.grad(cost, adv_images)[0]
            adv_images = adv_images + self.alpha * grad.sign()
            delta = torch.clamp(adv_images - images, min=-self.eps, max=self.eps)
            adv_images = torch.clamp(images + delta, min=0, max=1).detach()
        return adv_images


torch.manual_seed(0)
classifier = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10)).eval()
attack = PGD(classifier)
x_adv = attack(torch.rand(2, 3, 8, 8), torch.tensor([1, 7]))
