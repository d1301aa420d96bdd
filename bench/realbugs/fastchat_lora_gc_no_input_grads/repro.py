"""Reproduction for `fastchat_lora_gc_no_input_grads`: lm-sys/FastChat 126ab9ef (enable input grad).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import warnings

import torch
from torch.utils.checkpoint import checkpoint

warnings.filterwarnings("ignore")


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.base = torch.nn.Linear(4, 4).requires_grad_(False)     # frozen base weight
        self.lora_a = torch.nn.Linear(4, 2, bias=False)              # trainable LoRA weights
        self.lora_b = torch.nn.Linear(2, 4, bias=False)

    def forward(self, h):
        return self.base(h) + self.lora_b(self.lora_a(h))


def lora_grad(fixed):
    torch.manual_seed(0)
    embed = torch.nn.Embedding(10, 4).requires_grad_(False)         # frozen embeddings under LoRA
    block = Block()
    hidden = embed(torch.tensor([[1, 2, 3]]))
    if fixed:                                                        # model.enable_input_require_grads()
        hidden.requires_grad_(True)
    out = checkpoint(block, hidden, use_reentrant=True)              # HF gradient checkpointing (reentrant)
    if out.requires_grad:
        out.sum().backward()
    return block.lora_a.weight.grad


assert lora_grad(False) is None              # LoRA weights are never trained
assert lora_grad(True) is not None
print("CONFIRMED")
