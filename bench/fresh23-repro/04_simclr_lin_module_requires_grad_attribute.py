"""fresh23 real: p3i0t/SimCLR-CIFAR10 simclr_lin.py:118 (GS512).

The linear-evaluation script means to freeze the pretrained encoder: `model.enc.requires_grad = False`, then
`parameters = [param for param in model.parameters() if param.requires_grad is True]` and SGD on them. Setting
`requires_grad` on a Module only adds a Python attribute: every encoder parameter still requires grad, the list
holds the whole encoder, and SGD (lr 0.2, momentum) fine-tunes it -- the reported "linear evaluation" accuracy is a
fine-tuning accuracy. Run below with the same LinModel and statements.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LinModel(nn.Module):                                 # simclr_lin.py:40-51
    def __init__(self, encoder, feature_dim, n_classes):
        super().__init__()
        self.enc = encoder
        self.lin = nn.Linear(feature_dim, n_classes)

    def forward(self, x):
        return self.lin(self.enc(x))


enc = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),    # stands for the resnet18
                    nn.Conv2d(16, 512, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Flatten())  # (torchvision absent)
model = LinModel(enc, 512, 10)
model.enc.requires_grad = False                            # line 118
parameters = [p for p in model.parameters() if p.requires_grad is True]   # line 119
n_enc = sum(1 for _ in model.enc.parameters())
assert len(parameters) == n_enc + 2, (len(parameters), n_enc)
optimizer = torch.optim.SGD(parameters, 0.2, momentum=0.9, nesterov=True)
w0 = model.enc[0].weight.detach().clone()
x, y = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
loss = F.cross_entropy(model(x), y)
optimizer.zero_grad(); loss.backward(); optimizer.step()
assert not torch.equal(model.enc[0].weight.detach(), w0)
print(f"optimiser holds {len(parameters)} tensors ({n_enc} of the encoder); encoder conv1 changed by one step")

# contrast: requires_grad_(False) freezes it
model.enc.requires_grad_(False)
assert len([p for p in model.parameters() if p.requires_grad]) == 2
print("contrast, model.enc.requires_grad_(False): only lin.weight and lin.bias left")
