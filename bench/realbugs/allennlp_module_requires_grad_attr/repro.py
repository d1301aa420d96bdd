"""Reproduction for `allennlp_module_requires_grad_attr`: allenai/allennlp commit 9a0e01fae7 ("fix trainable and requires_grad kwargs (#2932)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `self.bert_model.requires_grad = trainable` sets a plain attribute on the module and freezes nothing, so BERT is fine-tuned although `trainable=False`; the fix sets `requires_grad` on every parameter.
"""

import torch

bert_model = torch.nn.Linear(3, 3)
bert_model.requires_grad = False                    # buggy: a plain attribute
assert all(p.requires_grad for p in bert_model.parameters())   # nothing is frozen
for param in bert_model.parameters():               # the fix
    param.requires_grad = False
assert not any(p.requires_grad for p in bert_model.parameters())

print("CONFIRMED")
