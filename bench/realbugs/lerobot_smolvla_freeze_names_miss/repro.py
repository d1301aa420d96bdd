"""Reproduction for `lerobot_smolvla_freeze_names_miss`: huggingface/lerobot ede1fc29 (freeze the intended VLM layers when train_expert_only=False).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


class TextModel(torch.nn.Module):          # parameter names as transformers now lays them out: text_model.layers.N / text_model.norm
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])
        self.norm = torch.nn.LayerNorm(4)


class VLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.text_model = TextModel()
        self.lm_head = torch.nn.Linear(4, 10)


def freeze(vlm, fixed):
    last_layers = [2]
    if fixed:
        frozen_layers = ["lm_head", "text_model.norm.weight"] + [f"text_model.layers.{l}." for l in last_layers]
    else:
        frozen_layers = ["lm_head", "text_model.model.norm.weight"] + [f"text_model.model.layers.{l}." for l in last_layers]
    for name, params in vlm.named_parameters():
        if any(k in name for k in frozen_layers):
            params.requires_grad = False


for fixed in (False, True):
    vlm = VLM()
    freeze(vlm, fixed)
    assert vlm.text_model.layers[2].weight.requires_grad != fixed
    assert vlm.text_model.norm.weight.requires_grad != fixed
print("CONFIRMED")
