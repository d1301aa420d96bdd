"""Reproduction for `rtdetr_decoder_input_detach_cuts_denoising_embed`: lyuwenyu/RT-DETR 66ff4a4d (upload pytorch weights and fix `detach` bug).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn as nn

torch.manual_seed(0)
num_classes, hidden_dim = 5, 8
denoising_class_embed = nn.Embedding(num_classes + 1, hidden_dim, padding_idx=num_classes)
enc_proj = nn.Linear(hidden_dim, hidden_dim)
decoder = nn.Linear(hidden_dim, 1)


def get_decoder_input(memory, denoising_class, fixed):
    output_memory = enc_proj(memory)
    topk_ind = torch.topk(output_memory.max(-1).values, 3, dim=1).indices
    target = output_memory.gather(dim=1, index=topk_ind.unsqueeze(-1).repeat(1, 1, output_memory.shape[-1]))
    if fixed:
        target = target.detach()
    if denoising_class is not None:
        target = torch.concat([denoising_class, target], 1)
    return target if fixed else target.detach()


def embed_grad(fixed):
    denoising_class_embed.zero_grad()
    memory = torch.randn(2, 10, hidden_dim)
    denoising_class = denoising_class_embed(torch.randint(0, num_classes, (2, 4)))
    target = get_decoder_input(memory, denoising_class, fixed)
    decoder(target).pow(2).mean().backward()
    return denoising_class_embed.weight.grad


assert embed_grad(False) is None                   # buggy: the denoising embedding never gets a gradient
g = embed_grad(True)
assert g is not None and g.abs().sum() > 0
print("CONFIRMED")
