# From cassidylaidlaw/perceptual-advex perceptual_advex/perceptual_attacks.py:359 (fresh7, first try at d79ed50).
# Finding: GS410 "This backward inside `forward` frees the caller's graph; its own backward then raises."
# Why wrong: the backward is `loss.sum().backward(retain_graph=True)`: it frees nothing. Besides, `forward`
# sets `inputs.requires_grad = True`, which torch allows only on a leaf, so the input carries no caller graph.
# The attack's caller (adversarial training) backwards its own loss afterwards without error (this program).
import torch
import torch.nn as nn


class FirstOrderStepPerceptualAttack(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, inputs, labels):
        self.inputs = inputs

        inputs.requires_grad = True
        orig_logits = self.model(inputs)
        loss = nn.functional.cross_entropy(orig_logits, labels, reduction="none")
        loss.sum().backward(retain_graph=True)

        inputs_grad = inputs.grad.data.clone()
        if inputs_grad.abs().max() < 1e-4:
            return inputs
        return (inputs + 0.01 * inputs_grad.sign()).detach()


model = nn.Linear(4, 3)
attack = FirstOrderStepPerceptualAttack(model)
x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
adv = attack(x, y)
model.zero_grad()
nn.functional.cross_entropy(model(adv), y).backward()
print("ok")
