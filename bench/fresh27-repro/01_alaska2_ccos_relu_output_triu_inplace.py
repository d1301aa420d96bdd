"""fresh27 real: BloodAxe/Kaggle-2020-Alaska2 alaska2/loss.py:183 (GS301).

`ContrastiveCosineEmbeddingLoss.forward` (the `--embedding-loss ccos` criterion, used by scripts/run_1.sh's first
training command) ends with

    diff_class_loss = F.relu(cossim * (~same_class_mask).to(input.dtype) - margin)     # 182
    diff_class_loss = diff_class_loss.triu_(diagonal=1).sum()                            # 183

ReLU's backward reads its own output, and `triu_` overwrites that output in place, so the first backward through the
loss raises. The per-class term (`((1 - cossim) * mask).triu_(diagonal=1)`, line 176) is fine: a product saves its
inputs, not its result. The forward below is the repository's, statement for statement.
"""
import torch
import torch.nn.functional as F
from torch import nn


class ContrastiveCosineEmbeddingLoss(nn.Module):
    def __init__(self, out_of_place=False):
        super().__init__()
        self.out_of_place = out_of_place

    def forward(self, input, target):
        batch_size, embedding_size = input.size()
        binary_target = target > 0
        target_a = binary_target.view(batch_size, 1)
        target_b = binary_target.view(1, batch_size)
        same_class_mask = target_a == target_b
        input_a = input.view(batch_size, 1, embedding_size)
        input_b = input.view(1, batch_size, embedding_size)
        cossim = F.cosine_similarity(input_a, input_b, dim=2)
        class_counts = torch.histc(target, 4)
        same_class_loss = 0
        for i, counts in enumerate(class_counts):
            if counts == 0:
                continue
            target_a = (target == i).view(batch_size, 1)
            target_b = (target == i).view(1, batch_size)
            same_class_mask = target_a == target_b
            single_class_loss = (1 - cossim) * same_class_mask.to(input.dtype)
            single_class_loss = single_class_loss.triu_(diagonal=1).sum() / counts          # 176: fine
            same_class_loss = same_class_loss + single_class_loss
        margin = 0.5
        diff_class_loss = F.relu(cossim * (~same_class_mask).to(input.dtype) - margin)      # 182
        if self.out_of_place:
            diff_class_loss = diff_class_loss.triu(diagonal=1).sum()
        else:
            diff_class_loss = diff_class_loss.triu_(diagonal=1).sum()                        # 183
        return (same_class_loss + diff_class_loss) / batch_size


torch.manual_seed(0)
embed = nn.Linear(16, 32)                      # stands in for the model's embedding head
x, target = torch.randn(16, 16), torch.randint(4, (16,)).float()

loss = ContrastiveCosineEmbeddingLoss()(embed(x), target)
try:
    loss.backward()
except RuntimeError as e:
    print("as written, backward raises:", str(e)[:120])
    assert "modified by an inplace operation" in str(e) and "Relu" in str(e)
else:
    raise AssertionError("backward did not raise")

loss = ContrastiveCosineEmbeddingLoss(out_of_place=True)(embed(x), target)
loss.backward()                                # only line 183 made out of place: runs
assert embed.weight.grad is not None
print("with `triu` (out of place) at line 183 it runs; line 176's `triu_` is fine")
