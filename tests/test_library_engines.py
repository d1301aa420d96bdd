"""Training loops driven through library engines gradsight cannot see (DeepSpeed's `model.backward(loss);
model.step()`, whose step zeroes the gradients itself), next to helpers whose names hold the verb "optimize"
(BELLE's `only_optimize_lora_parameters(model)`; bench/fresh27-false/01): the engine is not an optimizer by name.
The twin binds the stepped name to something named for an optimizer and never zeroes it: torch shows the
gradients piling up."""

from __future__ import annotations

import subprocess
import sys

from gradsight.analysis import analyze_source

BELLE = """\
import deepspeed
import torch
from utils.module.lora import only_optimize_lora_parameters


def main(args, model, train_dataloader, ds_config):
    if args.only_optimize_lora:
        model = only_optimize_lora_parameters(model)
    model, optimizer, _, lr_scheduler = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                                             args=args, config=ds_config)
    for epoch in range(args.num_train_epochs):
        for step, batch in enumerate(train_dataloader):
            loss = model(batch)
            model.backward(loss)
            model.step()
"""

TWIN = """\
import torch
import torch.nn as nn


def get_optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=0.0)


def main(model, loader, epochs=3):
    opt = get_optimizer(model)
    for epoch in range(epochs):
        for x in loader:
            loss = model(x).sum()
            loss.backward()
            opt.step()
    return model


m = main(nn.Linear(2, 1), [torch.ones(3, 2)])
"""


def _codes(src: str) -> list:
    return [(f.code, f.line) for f in analyze_source(src, "train.py").findings if f.severity.value != "information"]


def test_engine_step_is_not_taken_for_an_optimizer_by_a_helper_name():
    assert not [c for c in _codes(BELLE) if c[0] == "GS503"]


def test_optimizer_named_by_its_factory_still_needs_zero_grad():
    assert ("GS503", 14) in _codes(TWIN)
    run = subprocess.run([sys.executable, "-c", TWIN + "\nprint(bool((m.bias.grad == 9).all()))\n"],
                         capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == "True", run.stderr[-2000:]
