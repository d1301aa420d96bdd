"""fresh14 false shape 1 (GS510, kefirski/pytorch_RVAE selfModules/highway.py:12, 16, 20).

Modules kept in a plain list, whose parameters the same __init__ hands to `self.register_parameter` one by one
(through a helper method). They are registered parameters of the module: `model.parameters()` yields them, the
optimizer trains them, `state_dict` saves them and `.to()` moves them. Runs clean under torch; the base reports
GS510 on each list.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Highway(nn.Module):
    def __init__(self, size, num_layers, f):
        super(Highway, self).__init__()
        self.num_layers = num_layers
        self.nonlinear = [nn.Linear(size, size) for _ in range(num_layers)]
        for i, module in enumerate(self.nonlinear):
            self._add_to_parameters(module.parameters(), 'nonlinear_module_{}'.format(i))
        self.linear = [nn.Linear(size, size) for _ in range(num_layers)]
        for i, module in enumerate(self.linear):
            self._add_to_parameters(module.parameters(), 'linear_module_{}'.format(i))
        self.gate = [nn.Linear(size, size) for _ in range(num_layers)]
        for i, module in enumerate(self.gate):
            self._add_to_parameters(module.parameters(), 'gate_module_{}'.format(i))
        self.f = f

    def forward(self, x):
        for layer in range(self.num_layers):
            gate = torch.sigmoid(self.gate[layer](x))
            nonlinear = self.f(self.nonlinear[layer](x))
            linear = self.linear[layer](x)
            x = gate * nonlinear + (1 - gate) * linear
        return x

    def _add_to_parameters(self, parameters, name):
        for i, parameter in enumerate(parameters):
            self.register_parameter(name='{}-{}'.format(name, i), param=parameter)


if __name__ == "__main__":
    torch.manual_seed(0)
    hw = Highway(8, 2, F.relu)
    params = list(hw.parameters())
    assert len(params) == 3 * 2 * 2, len(params)          # every Linear's weight and bias
    assert any(p is hw.gate[1].weight for p in params)
    before = hw.gate[1].weight.detach().clone()
    opt = torch.optim.SGD(hw.parameters(), lr=0.1)
    hw(torch.randn(4, 8)).pow(2).sum().backward()
    opt.step()
    assert not torch.equal(before, hw.gate[1].weight)    # the optimizer trained a list member
    assert len(hw.state_dict()) == 12
    hw.to(torch.float64)                                  # _apply moves the shared Parameter objects
    assert hw.gate[1].weight.dtype == torch.float64
    print("ok: the list members' parameters are registered, trained, saved and moved")
