"""Reproduction for `stanza_depparse_bert_always_detached`: stanfordnlp/stanza commit 58fe65c3 ("Reuse the peft code from NER in the depparse").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the depparse trainer computes `detach = any(x.startswith("bert") or x.startswith("peft") for x in self.optimizer)`
(inverted by the earlier commit 086fcb3c: the comment says "if there is no bert optimizer ... detach") and the model
ORs it into `detach = detach or not bert_finetune or not self.training`, so whenever a bert optimizer exists the
transformer features are `.clone().detach()`-ed and the bert weights get no gradient: fine-tuning silently does
nothing while its optimizer steps; the fix drops the trainer's flag and detaches only when not fine-tuning or not training.
"""

import torch

bert_model = torch.nn.Linear(4, 4)
head = torch.nn.Linear(4, 2)
optimizer = {
    "general_optimizer": torch.optim.SGD(head.parameters(), lr=0.1),
    "bert_optimizer": torch.optim.SGD(bert_model.parameters(), lr=0.1),
}
args = {"bert_finetune": True}
training = True


def extract_bert_embeddings(x, detach):
    features = bert_model(x)
    if detach:
        return features.clone().detach()
    return features


def update(fixed):
    for opt in optimizer.values():
        opt.zero_grad()
    x = torch.randn(3, 4)
    if fixed:
        detach = not args.get("bert_finetune", False) or not training
    else:
        detach = any(k.startswith("bert") or k.startswith("peft") for k in optimizer)  # trainer (buggy)
        detach = detach or not args.get("bert_finetune", False) or not training        # model
    loss = head(extract_bert_embeddings(x, detach)).pow(2).sum()
    loss.backward()
    return bert_model.weight.grad


assert update(False) is None            # bert fine-tuning receives no gradient at all
g = update(True)
assert g is not None and g.abs().sum() > 0

print("CONFIRMED")
