"""fresh32 harmless: Eromera/erfnet_pytorch eval/iouEval.py:36, 44 and train/iouEval.py:36, 44 (GS212 x4; the two
files are identical).

`iouEval.addBatch(x, y)` (called as `addBatch(outputs.max(1)[1].unsqueeze(1).data, targets.data)` by train/main.py
and the eval scripts) builds the one-hot maps with

    x_onehot = torch.zeros(x.size(0), self.nClasses, x.size(2), x.size(3))
    if x.is_cuda: x_onehot = x_onehot.cuda()
    x_onehot.scatter_(1, x, 1).float()                    # line 36 (y_onehot: line 44)

The `.float()` result is thrown away (true), but `scatter_` has already written the one-hot map into `x_onehot` in
place and `torch.zeros` makes float32, so `.float()` would return the same tensor: keeping the result changes
nothing. Run: the IoU counts from the file's statements equal those with the result assigned.
"""
import torch

torch.manual_seed(0)
nClasses, ignoreIndex = 5, 4
x = torch.randint(0, nClasses, (2, 1, 6, 7))          # predictions: outputs.max(1)[1].unsqueeze(1)
y = torch.randint(0, nClasses, (2, 1, 6, 7))          # targets


def counts(assign):
    x_onehot = torch.zeros(x.size(0), nClasses, x.size(2), x.size(3))
    if assign:
        x_onehot = x_onehot.scatter_(1, x, 1).float()
    else:
        x_onehot.scatter_(1, x, 1).float()            # line 36
    y_onehot = torch.zeros(y.size(0), nClasses, y.size(2), y.size(3))
    if assign:
        y_onehot = y_onehot.scatter_(1, y, 1).float()
    else:
        y_onehot.scatter_(1, y, 1).float()            # line 44
    assert x_onehot.dtype == torch.float32 and x_onehot.sum() == x.numel()
    ignores = y_onehot[:, ignoreIndex].unsqueeze(1)
    x_onehot = x_onehot[:, :ignoreIndex]
    y_onehot = y_onehot[:, :ignoreIndex]
    tp = (x_onehot * y_onehot).sum((0, 2, 3))
    fp = (x_onehot * (1 - y_onehot - ignores)).sum((0, 2, 3))
    fn = ((1 - x_onehot) * y_onehot).sum((0, 2, 3))
    return torch.stack([tp, fp, fn])


a, b = counts(False), counts(True)
print("tp/fp/fn as written:\n", a)
assert torch.equal(a, b)
t = torch.zeros(3)
assert t.float() is t                                  # .float() of a float32 tensor is the tensor itself
print("OK: the discarded .float() changes nothing")
