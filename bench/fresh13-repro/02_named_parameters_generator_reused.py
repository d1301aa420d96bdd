"""BERT-NER-Pytorch run_ner_span.py:43-60: `bert_parameters = model.bert.named_parameters()` (a generator) feeds two
list comprehensions; the second one (the no-decay group: biases and LayerNorm weights) gets nothing, so those
parameters are never handed to the optimizer and never train."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4))
no_decay = ["bias", "1.weight"]
bert_parameters = model.named_parameters()
groups = [
    {"params": [p for n, p in bert_parameters if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
    {"params": [p for n, p in bert_parameters if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
]
print("group sizes:", [len(g["params"]) for g in groups], "(the model has", len(list(model.parameters())), "parameters)")
opt = torch.optim.AdamW([g for g in groups if g["params"]], lr=0.1)
before = model[1].weight.detach().clone()
model(torch.randn(8, 4)).pow(2).sum().backward()
opt.step()
print("LayerNorm weight changed by the step:", not torch.equal(before, model[1].weight))
