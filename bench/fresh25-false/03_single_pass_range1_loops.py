"""fresh25 false: PacktPublishing/Hands-On-Generative-Adversarial-Networks-with-PyTorch-1.x
Chapter08/cats_dogs/advGAN.py:79, 85, 89 (GS402 x3, "carries the previous iteration's graph, which the backward at
line 107 frees; the next iteration's backward then raises").

`AdvGAN_Attack.train_batch(x, labels)` (from mathcbc/advGAN_pytorch) has two loops `for i in range(1):`. The first
makes `perturbation = self.netG(x)` and `adv_images = clamp(clamp(perturbation, -0.3, 0.3) + x, box_min,
box_max)` and trains the discriminator on `adv_images.detach()`; the second uses `adv_images` and `perturbation`
(graphs alive) for `pred_fake = self.netDisc(adv_images)` (79), `loss_G_fake.backward(retain_graph=True)`,
`loss_perturb = torch.mean(torch.norm(perturbation.view(...), 2, dim=1))` (85), `self.model(adv_images)` (89), and
`loss_G.backward()` (107), then `optimizer_G.step()`. `range(1)` runs its body once, so there is no "next
iteration" of the second loop, and every call of `train_batch` (one per batch, from `train`) makes `perturbation`
and `adv_images` anew in the first loop. Run below with the same statements (small conv nets, random batches):
five batches train without error, and the generator's weights change.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AdvGAN_Attack:
    def __init__(self, model, model_num_labels=2, image_nc=3, box_min=0, box_max=1):
        self.device = "cpu"
        self.model, self.model_num_labels = model, model_num_labels
        self.box_min, self.box_max = box_min, box_max
        self.netG = nn.Sequential(nn.Conv2d(image_nc, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, image_nc, 3, padding=1),
                                  nn.Tanh())
        self.netDisc = nn.Sequential(nn.Conv2d(image_nc, 4, 4, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(),
                                     nn.Linear(4 * 4 * 4, 1), nn.Sigmoid())
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=0.001)
        self.optimizer_D = torch.optim.Adam(self.netDisc.parameters(), lr=0.001)

    def train_batch(self, x, labels):
        for i in range(1):
            perturbation = self.netG(x)
            adv_images = torch.clamp(perturbation, -0.3, 0.3) + x
            adv_images = torch.clamp(adv_images, self.box_min, self.box_max)
            self.optimizer_D.zero_grad()
            pred_real = self.netDisc(x)
            loss_D_real = F.mse_loss(pred_real, torch.ones_like(pred_real, device=self.device))
            loss_D_real.backward()
            pred_fake = self.netDisc(adv_images.detach())
            loss_D_fake = F.mse_loss(pred_fake, torch.zeros_like(pred_fake, device=self.device))
            loss_D_fake.backward()
            loss_D_GAN = loss_D_fake + loss_D_real
            self.optimizer_D.step()
        for i in range(1):
            self.optimizer_G.zero_grad()
            pred_fake = self.netDisc(adv_images)                                            # advGAN.py:79
            loss_G_fake = F.mse_loss(pred_fake, torch.ones_like(pred_fake, device=self.device))
            loss_G_fake.backward(retain_graph=True)
            C = 0.1
            loss_perturb = torch.mean(torch.norm(perturbation.view(perturbation.shape[0], -1), 2, dim=1))  # :85
            logits_model = self.model(adv_images)                                           # advGAN.py:89
            probs_model = F.softmax(logits_model, dim=1)
            onehot_labels = torch.eye(self.model_num_labels, device=self.device)[labels]
            real = torch.sum(onehot_labels * probs_model, dim=1)
            other, _ = torch.max((1 - onehot_labels) * probs_model - onehot_labels * 10000, dim=1)
            zeros = torch.zeros_like(other)
            loss_adv = torch.max(real - other, zeros)
            loss_adv = torch.sum(loss_adv)
            adv_lambda = 10
            pert_lambda = 1
            loss_G = adv_lambda * loss_adv + pert_lambda * loss_perturb
            loss_G.backward()                                                               # advGAN.py:107
            self.optimizer_G.step()
        return loss_D_GAN.item(), loss_G_fake.item(), loss_perturb.item(), loss_adv.item()


target = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 2))
attack = AdvGAN_Attack(target)
before = attack.netG[0].weight.detach().clone()
for batch in range(5):
    images, labels = torch.rand(4, 3, 8, 8), torch.randint(0, 2, (4,))
    print("batch", batch, "losses:", [round(v, 4) for v in attack.train_batch(images, labels)])
assert not torch.equal(before, attack.netG[0].weight)
print("five batches trained, the generator's weights changed, nothing raised")
