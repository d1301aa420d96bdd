"""fresh36 repro 02 (real, GS512 x5): czczup/URST Wang2020Collaborative/model/model_cd.py:322, 377, 456, 556, 688.

Each SmallEncoder{1..5}_16x_aux.__init__ does
    self.conv0 = nn.Conv2d(3,3,1,1,0)
    self.conv0.requires_grad = False          # meant: keep the fixed input conv (VGG's preprocessing) frozen
and every forward/forward_aux starts with `out0 = self.conv0(input)`.
main.py --mode wct_se builds TrainSE_With_WCTDecoder, whose SE is `SmallEncoder%d_16x_aux(args.SE, fixed=False)`
(with --pretrained_init, loaded from the pruned VGG), then `optimizer = torch.optim.Adam(net.parameters(), lr)`
and `optimizer.zero_grad(); loss.backward(); optimizer.step()` every step.
SmallEncoder1_16x_aux below is the file's class (model loading omitted); the teacher BE is a fixed stand-in.
"""
import torch
import torch.nn as nn


class SmallEncoder1_16x_aux(nn.Module):
    def __init__(self, model=None, fixed=False):
        super(SmallEncoder1_16x_aux, self).__init__()
        self.fixed = fixed
        self.conv0 = nn.Conv2d(3, 3, 1, 1, 0)
        self.conv0.requires_grad = False
        self.conv11 = nn.Conv2d(3, 24, 3, 1, 0, dilation=1)
        self.conv11_aux = nn.Conv2d(24, 64, 1, 1, 0)
        self.relu = nn.ReLU(inplace=True)
        self.pad = nn.ReflectionPad2d((1, 1, 1, 1))
        if fixed:
            for param in self.parameters():
                param.requires_grad = False

    def forward_aux(self, input, relu=True):
        out0 = self.conv0(input)
        out11 = self.relu(self.conv11(self.pad(out0)))
        if relu:
            out11_aux = self.relu(self.conv11_aux(out11))
        else:
            out11_aux = self.conv11_aux(out11)
        return out11_aux,


torch.manual_seed(0)
BE = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1), nn.ReLU())     # fixed teacher stand-in
for p in BE.parameters():
    p.requires_grad = False
SE = SmallEncoder1_16x_aux(None, fixed=False)
net = nn.ModuleDict({"BE": BE, "SE": SE})
optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)
assert SE.conv0.requires_grad is False                      # only a plain attribute on the module
assert SE.conv0.weight.requires_grad and SE.conv0.bias.requires_grad
w0 = SE.conv0.weight.detach().clone()
for step in range(3):
    c = torch.rand(2, 3, 16, 16)
    cF_SE = SE.forward_aux(c, True)
    feat_loss = nn.MSELoss()(cF_SE[0], BE(c).data)
    optimizer.zero_grad()
    feat_loss.backward()
    optimizer.step()
assert SE.conv0.weight.grad is not None and SE.conv0.weight.grad.abs().sum() > 0
assert not torch.equal(SE.conv0.weight.detach(), w0)
print("conv0 weight change after 3 Adam steps:", (SE.conv0.weight.detach() - w0).abs().max().item())
# what was meant
SE2 = SmallEncoder1_16x_aux(None, fixed=False)
SE2.conv0.requires_grad_(False)
assert not SE2.conv0.weight.requires_grad
print("OK: `self.conv0.requires_grad = False` freezes nothing; the optimizer trains conv0 in wct_se mode")
