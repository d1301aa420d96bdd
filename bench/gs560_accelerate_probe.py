"""GS560 ground truth with the real library: accelerate 1.15.0 (installed apart, `pip install --target DIR accelerate`,
DIR appended to sys.path after the venv so that the venv's torch 2.13 is used). Prints the gradient the step sees.
Seen 2026-11-27: module.zero_grad -> last micro-batch only: True, all 4: False; optimizer.zero_grad -> all 4: True."""
import sys
sys.path.append(sys.argv[1] if len(sys.argv) > 1 else "/tmp/norule3-pkgs")   # after the venv's site-packages: the venv's torch is used
import torch
from accelerate import Accelerator
print(torch.__version__, torch.__file__)

def run(zero_module):
    torch.manual_seed(0)
    acc = Accelerator(gradient_accumulation_steps=4, cpu=True)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)   # lr 0: weights stay, compare the gradient used by the step
    model, opt = acc.prepare(model, opt)
    xs = [torch.randn(2, 3) for _ in range(4)]
    seen = None
    for i, x in enumerate(xs):
        with acc.accumulate(model):
            loss = model(x).sum()
            acc.backward(loss)
            if acc.sync_gradients:
                seen = model.weight.grad.clone()
            opt.step()
            if zero_module:
                model.zero_grad(set_to_none=True)
            else:
                opt.zero_grad(set_to_none=True)
    full = sum(x.sum(0) for x in xs) / 4
    last = xs[-1].sum(0) / 4
    return seen, full, last

seen, full, last = run(True)
print("module.zero_grad: grad at the step == last micro-batch only:", torch.allclose(seen[0], last), "== all 4:", torch.allclose(seen[0], full))
seen, full, last = run(False)
print("optimizer.zero_grad: grad at the step == all 4:", torch.allclose(seen[0], full))
