"""fresh32 false: xingyizhou/pytorch-pose-hg-3d src/lib/train.py:62 and src/lib/train_3d.py:80 (GS301 x2).

Claim: "This in-place write overwrites a tensor saved for backward, so backward raises on the paths that save it.
`output[-1]['hm'] = (output[-1]['hm'] + output_flip) / 2` modifies `output`, `output[k]`, which shares its storage,
was saved for backward by `MSELoss` at line 43 [train_3d: 52]".

The only model (src/lib/models/msra_resnet.py) ends `ret = {}; for head in self.heads: ret[head] =
self.__getattr__(head)(x); return [ret]`: `output` is a list holding one dict of head tensors, and
`output[-1]['hm'] = ...` rebinds a dict key to a new tensor; no tensor is written. Also the statement is in the
`else:` arm of `if split == 'train': optimizer.zero_grad(); loss.backward(); optimizer.step()`, so on its path the
loss is never backwarded (val runs `.item()` / `.detach()` only). (For msra_* archs opts.py sets num_stacks = 1, so
the `for k in range(opt.num_stacks - 1)` loop at 42/51 never runs; with a dict in `output[k]` it could not.)
The step below is train.py's loop body (CPU, a tiny 2-head msra-like net, flip test simplified to torch.flip);
run: the train split trains, the val split runs the rebinding, and MSELoss's saved tensor is untouched: a backward
through the val loss (which the file never does) also runs.
"""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Conv2d(3, 4, 3, padding=1)
        self.heads = {'hm': 2, 'depth': 2}
        self.hm = nn.Conv2d(4, 2, 1)
        self.depth = nn.Conv2d(4, 2, 1)

    def forward(self, x):
        x = torch.relu(self.body(x))
        ret = {}
        for head in self.heads:
            ret[head] = self.__getattr__(head)(x)
        return [ret]


def step(split, model, batches, optimizer=None, num_stacks=1):
    model.train() if split == 'train' else model.eval()
    crit = torch.nn.MSELoss()
    outs = []
    for input, target in batches:
        output = model(input)
        loss = crit(output[-1]['hm'], target)
        for k in range(num_stacks - 1):
            loss += crit(output[k], target)
        if split == 'train':
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        else:
            output_flip = torch.flip(model(torch.flip(input, [3]))[-1]['hm'].detach(), [3])
            saved = output[-1]['hm']
            v = saved._version
            output[-1]['hm'] = (output[-1]['hm'] + output_flip) / 2         # line 62
            assert saved._version == v and output[-1]['hm'] is not saved
            loss.backward()          # not in the file: shows the saved tensor is intact
        outs.append(loss.item())
    return outs


torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(2, 3, 8, 8), torch.rand(2, 2, 8, 8)) for _ in range(3)]
print("train:", step('train', model, batches, opt))
print("val:  ", step('val', model, batches))
print("OK: line 62 rebinds a dict entry; nothing saved for backward is modified")
