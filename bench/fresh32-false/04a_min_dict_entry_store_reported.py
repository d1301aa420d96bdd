"""fresh32-false 04a (minimised from xingyizhou/pytorch-pose-hg-3d src/lib/train.py:62, GS301): REPORTED by the base
engine. `output` is the model's `[ret]` (a list holding a dict of head tensors); `output[-1]['hm'] = ...` rebinds a dict
key, on the val arm where nothing is backwarded. Quiet without `model.train()`/`model.eval()` at the top, or without
the `for k in range(num_stacks - 1): loss += crit(output[k], target)` loop (04b), or with the backward on every path.
"""
import torch


def step(split, model, data_loader, num_stacks, optimizer=None):
    if split == 'train':
        model.train()
    else:
        model.eval()
    crit = torch.nn.MSELoss()
    for input, target in data_loader:
        output = model(input)
        loss = crit(output[-1]['hm'], target)
        for k in range(num_stacks - 1):
            loss += crit(output[k], target)
        if split == 'train':
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        else:
            output_flip = model(input.flip(3))[-1]['hm'].detach().flip(3)
            output[-1]['hm'] = (output[-1]['hm'] + output_flip) / 2
        print(loss.item())



class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hm = torch.nn.Conv2d(3, 2, 3, padding=1)

    def forward(self, x):
        ret = {'hm': self.hm(x)}
        return [ret]


if __name__ == "__main__":
    torch.manual_seed(0)
    net = Net()
    data = [(torch.randn(2, 3, 8, 8), torch.rand(2, 2, 8, 8)) for _ in range(3)]
    step('train', net, data, 1, torch.optim.SGD(net.parameters(), lr=0.1))
    step('val', net, data, 1)
    print("OK: train and val run; the val arm rebinds a dict entry")
