"""fresh17 (real): GS516 latent_ode `lib/rnn_baselines.py:250, 251, 370, 371` and Precipitation-Nowcasting
`nowcasting/models/convLSTM.py:17, 18, 19`.

The real statements: `self.w_input_decay = Parameter(torch.Tensor(1, int(input_dim))).to(self.device)` (latent_ode,
`--input-decay`, device `cuda:0` whenever CUDA is available, run_models.py:94) and
`self.Wci = nn.Parameter(torch.zeros(1, C, H, W)).to(cfg.GLOBAL.DEVICE)` (nowcasting, DEVICE `cuda` whenever
available, config.py:9). When `.to()` moves the Parameter (another device, or dtype) it returns a plain tensor,
which `Module.__setattr__` stores as an ordinary attribute: it is missing from `parameters()` and `state_dict()`,
so `optim.Adamax(model.parameters())` / `Adam(encoder_forecaster.parameters())` never update it (the ConvLSTM
peepholes stay zero, the latent_ode decay weights stay at the uninitialised values of `torch.Tensor(1, n)`), and
checkpoints lose it. This machine has no GPU: a dtype change makes `.to()` copy exactly as a CPU->CUDA move does
(both go through `aten::_to_copy`); a `meta` device move shows the device case returns a non-Parameter too. Only
a `.to()` that changes nothing returns the Parameter itself (the CPU-only run), where it is registered.
"""
import torch
import torch.nn as nn


class ConvLSTMPeephole(nn.Module):  # nowcasting/models/convLSTM.py, as written, with the move parametrised
    def __init__(self, move_to):
        super().__init__()
        self._conv = nn.Conv2d(2, 4, 3, padding=1)
        self.Wci = nn.Parameter(torch.zeros(1, 1, 4, 4)).to(move_to)

    def forward(self, x):
        c = torch.ones(x.size(0), 1, 4, 4, dtype=self.Wci.dtype)
        i, f, g, o = torch.chunk(self._conv(x).to(self.Wci.dtype), 4, dim=1)
        return torch.sigmoid(i + self.Wci * c).sum()


moved = nn.Parameter(torch.zeros(3)).to("meta")
print("Parameter(...).to('meta') is a Parameter:", isinstance(moved, nn.Parameter), "leaf:", moved.is_leaf)

for move_to in (torch.float32, torch.float64):  # float32: .to() is a no-op (like CPU->CPU); float64: a copy
    m = ConvLSTMPeephole(move_to)
    names = [n for n, _ in m.named_parameters()]
    opt = torch.optim.Adam(m.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        m(torch.randn(2, 2, 4, 4)).backward()
        opt.step()
    print(f"move_to={move_to}: registered={'Wci' in names}, in state_dict={'Wci' in m.state_dict()}, "
          f"Wci after 3 Adam steps: {m.Wci.abs().sum().item():.4f}")
