"""Reproduction for `packnet_outputs_keep_loss_graph`: TRI-ML/packnet-sfm commit 3959960ecd ("Fix memory leak").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The trainer appends each batch's `output` dict, whose `'loss'` still carries its graph, to `outputs` for the whole epoch, so every step's graph stays alive; the fix stores `output['loss'].detach()` first.
"""

import torch

model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)

def run(detach):
    outputs = []
    for _ in range(3):
        output = {"loss": model(torch.randn(2, 3)).pow(2).mean()}   # `output = module.training_step(batch)`
        output["loss"].backward()
        opt.step()
        if detach:
            output["loss"] = output["loss"].detach()                  # the fix
        outputs.append(output)
    return outputs

assert all(o["loss"].grad_fn is not None for o in run(False))        # the epoch keeps every step's graph
assert all(o["loss"].grad_fn is None for o in run(True))

print("CONFIRMED")
