"""fresh35 false: itayhubara/BinaryNet.pytorch main_binary.py:113, 127, 133, 169, 192, 286, 293 and
main_binary_hinge.py:120, 134, 140, 177, 200, 319, 326 (GS519 x14).

"`model` is a tensor, and tensors have no `load_state_dict()` / `parameters()` / `state_dict()` / `train()` /
`eval()`". main() does `model = models.__dict__[args.model]` (the package's `__init__` star-imports `alexnet`,
`alexnet_binary`, `resnet`, `resnet_binary`, `vgg_cifar10_binary`, each a factory returning an nn.Module; `--model`
is restricted to those names by `choices=model_names`), then `model = model(**model_config)`; `train()` and
`validate()` receive that module. Every reported call is a module method. The statements, with a stand-in package
holding the same kind of factory.
"""
import types

import torch
import torch.nn as nn
from ast import literal_eval


class AlexNetOWT_BN(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        return self.fc(x)


def alexnet_binary(**kwargs):
    num_classes = kwargs.get('num_classes', 1000)
    return AlexNetOWT_BN(num_classes)


models = types.ModuleType("models")
models.alexnet_binary = alexnet_binary
model_names = sorted(name for name in models.__dict__
                     if name.islower() and not name.startswith("__")
                     and callable(models.__dict__[name]))
args = types.SimpleNamespace(model='alexnet_binary', input_size=None, dataset='cifar10',
                             model_config="{'num_classes': 10}", lr=0.1)
assert args.model in model_names
model = models.__dict__[args.model]
model_config = {'input_size': args.input_size, 'dataset': args.dataset}
if args.model_config != '':
    model_config = dict(model_config, **literal_eval(args.model_config))
model = model(**model_config)
assert isinstance(model, nn.Module) and not isinstance(model, torch.Tensor)
model.load_state_dict(model.state_dict())
num_parameters = sum([l.nelement() for l in model.parameters()])
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
model.train()
model.eval()
print("OK: `model` is an nn.Module;", num_parameters, "parameters")
