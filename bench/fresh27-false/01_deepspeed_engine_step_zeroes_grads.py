"""fresh27 false: LianjiaTech/BELLE train/dschat_train_v1/main.py:374 (GS503).

The DeepSpeed-Chat style loop is

    model, optimizer, _, lr_scheduler = deepspeed.initialize(model=model, optimizer=optimizer, ...)   # 346
    for epoch in range(args.num_train_epochs):
        for step, batch in ...:
            outputs = model(**batch, use_cache=False)
            loss = outputs.loss
            model.backward(loss)                                                                      # 374
            model.step()                                                                              # 375

`model` here is the DeepSpeedEngine. `DeepSpeedEngine.step()` calls `_take_model_step()` at each gradient-accumulation
boundary, which runs `self.optimizer.step()` and then zeroes the gradients itself (deepspeed/runtime/engine.py:
`self.optimizer.zero_grad()` under ZeRO/fp16/amp, `self.zero_grad()` -- `param.grad = None` for every module
parameter -- otherwise). The documented DeepSpeed loop has no `zero_grad()` call for this reason. Nothing
accumulates across steps.

deepspeed is not installed here (it needs a distributed launch); `Engine` below reproduces the engine's step
bookkeeping from that source (micro-step counter, accumulation boundary, step then zero), over a real torch model and
optimizer, and runs BELLE's loop. gradsight's trigger, minimised with the base engine (/tmp/w27/min/b3.py, b4.py):
the file also binds `model = only_optimize_lora_parameters(model)` (line 245); GS503's `_optimizer_step` takes a
receiver bound to a call whose name contains "optim" for an optimizer, so `model.step()` counts as an optimizer
step with no zeroing. Renamed to `only_train_lora_parameters`, the finding goes away.
"""
import torch
from torch import nn


class Engine(nn.Module):
    """DeepSpeedEngine's forward/backward/step, as deepspeed/runtime/engine.py does them without ZeRO or fp16."""

    def __init__(self, module, optimizer, gradient_accumulation_steps=1):
        super().__init__()
        self.module, self.optimizer, self.gas = module, optimizer, gradient_accumulation_steps
        self.micro_steps = 0

    def forward(self, *a, **k):
        return self.module(*a, **k)

    def is_gradient_accumulation_boundary(self):
        return (self.micro_steps + 1) % self.gas == 0

    def backward(self, loss):
        if self.gas > 1:
            loss = loss / self.gas                      # _scale_loss_by_gas
        loss.backward()
        return loss

    def zero_grad(self):
        for _, param in self.module.named_parameters():
            param.grad = None

    def _take_model_step(self):
        self.optimizer.step()
        self.zero_grad()                                # "else: self.zero_grad()" after the optimizer step

    def step(self):
        if self.is_gradient_accumulation_boundary():
            self._take_model_step()
        self.micro_steps += 1


torch.manual_seed(0)
net = nn.Linear(8, 1)
model = Engine(net, torch.optim.SGD(net.parameters(), lr=0.0))     # lr 0: the weights stay, gradients compared
batches = [(torch.randn(4, 8), torch.randn(4, 1)) for _ in range(5)]
for x, y in batches:
    loss = nn.functional.mse_loss(model(x), y)
    model.backward(loss)
    seen = net.weight.grad.clone()
    expected = torch.autograd.grad(nn.functional.mse_loss(net(x), y), net.weight)[0]
    assert torch.allclose(seen, expected), "gradient accumulated from an earlier step"
    model.step()
    assert net.weight.grad is None                      # zeroed by the engine's step
print("5 steps: each backward's .grad is that batch's gradient alone; step() leaves .grad None")
