"""Reproduction for `llava_lora_projector_frozen`: haotian-liu/LLaVA 9e3f3d0 (Unfreeze projector when finetuning with LoRA).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


class LlavaModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lm = torch.nn.Linear(4, 4)
        self.mm_projector = torch.nn.Linear(3, 4)      # already present (loaded from a pretrained LLaVA)
        self.lora_A = torch.nn.Linear(4, 2)

    def initialize_vision_modules(self, fixed):
        if getattr(self, 'mm_projector', None) is None:
            self.mm_projector = torch.nn.Linear(3, 4)
        elif fixed:
            for p in self.mm_projector.parameters():
                p.requires_grad = True


def finetune(fixed):
    model = LlavaModel()
    for n, p in model.named_parameters():             # get_peft_model: only LoRA weights stay trainable
        p.requires_grad = 'lora_' in n
    model.initialize_vision_modules(fixed)             # called after get_peft_model in train.py
    return model.mm_projector.weight.requires_grad


assert not finetune(False)       # the projector is silently frozen
assert finetune(True)
print("CONFIRMED")
