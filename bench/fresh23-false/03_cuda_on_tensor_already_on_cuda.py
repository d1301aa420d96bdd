"""fresh23 false: mahyarnajibi/FreeAdversarialTraining main_free.py:198 (GS502).

gradsight: "`noise_batch` is not a leaf (from `Variable(global_noise_data[0:input.size(0)], requires_gra...`, line
181), so its `.grad` is None after backward".

What the code does: `global_noise_data = torch.zeros([...]).cuda()` at module level (line 159) lives on the current
CUDA device. In `train`, line 181 is `noise_batch = Variable(global_noise_data[0:input.size(0)],
requires_grad=True).cuda()`: `Variable(..., requires_grad=True)` makes a leaf, and `.cuda()` on a tensor that is
already on the current CUDA device performs no copy and returns the same object (torch's own docstring of
Tensor.cuda, printed below). So `noise_batch` is the leaf, `loss.backward()` fills `noise_batch.grad`, and line 198's
`fgsm(noise_batch.grad, ...)` reads it. This task's session had no GPU: the run below shows the same rule on the
CPU, where `.cpu()` / `.to("cpu")` of a CPU tensor return the object itself (a leaf whose .grad fills), and the
contrast, a real copy (`.to(torch.float64)`), is a non-leaf whose .grad stays None -- which is what gradsight
assumed `.cuda()` always does.

Minimised with the base engine (/tmp/w23/min/u.py..x.py): the global made with `.cuda()` or `device="cuda"`, then
`Variable(g[...], requires_grad=True).cuda()` or `g[...].clone().requires_grad_(True).cuda()` fire; without the
trailing `.cuda()` it is quiet.
"""
import warnings

import torch
from torch import nn
from torch.autograd import Variable

warnings.filterwarnings("ignore", message="The .grad attribute")

print("Tensor.cuda docstring:", " ".join(torch.Tensor.cuda.__doc__.split("\n\n")[2].split()))

torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 4 * 4, 10))
criterion = nn.CrossEntropyLoss()
global_noise_data = torch.zeros([8, 3, 4, 4]).cpu()                 # line 159, `.cuda()` on the GPU
inp, target = torch.rand(8, 3, 4, 4), torch.randint(0, 10, (8,))

for move in (lambda t: t.cpu(), lambda t: t.to("cpu")):            # the same-device move `.cuda()` is on the GPU
    noise_batch = move(Variable(global_noise_data[0:inp.size(0)], requires_grad=True))   # line 181
    assert noise_batch.is_leaf
    in1 = inp + noise_batch
    in1.clamp_(0, 1.0)
    loss = criterion(model(in1), target)
    loss.backward()
    assert noise_batch.grad is not None                              # line 198 reads it
    pert = 0.1 * torch.sign(noise_batch.grad)
    global_noise_data[0:inp.size(0)] += pert.data
print("same-device move: leaf, .grad filled; noise updated, |noise| max =", global_noise_data.abs().max().item())

# contrast: a move that really copies gives a non-leaf whose .grad stays None (gradsight's assumption)
nb = Variable(global_noise_data[0:8], requires_grad=True).to(torch.float64)
assert not nb.is_leaf
criterion(model((inp.double() + nb).float()), target).backward()
assert nb.grad is None
print("contrast, a copying move: non-leaf, .grad None")
