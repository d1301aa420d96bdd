"""fresh32-false 04b: QUIET with the base engine. 04a without the `for k in range(num_stacks - 1)` loop that hands
`output[k]` to MSELoss."""
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
