"""fresh35 false: omegafragger/DDU active_learning_script.py:246 (GS002), minimised; reported by the base engine.

"`data` no longer names the module, so `data.` at line 275 uses the assigned value instead." The script does
`import torch.utils.data as data` and uses the module (`data.Subset`, `data.ConcatDataset`) only before its run loop;
in the acquisition phase the ensemble arm (`for data, _ in pool_loader:`, line 246) and the else arm (`for data, _
in pool_loader:`, line 274) each rebind `data` as the batch and use `data.to(device)` at once. Line 275 is that
batch's `.to`, right under its own for target, as intended. Here both arms, the same shape; it runs.
"""
import torch
import torch.utils.data as data

ds = data.TensorDataset(torch.randn(8, 2), torch.zeros(8))
loader = data.DataLoader(ds, batch_size=4)
model = torch.nn.Linear(2, 3)
for flag in ["ensemble", "other"]:
    if flag == "ensemble":
        with torch.no_grad():
            for data, _ in loader:
                data = data.to("cpu")
                model(data)
    else:
        logits = []
        with torch.no_grad():
            for data, _ in loader:
                data = data.to("cpu")
                logits.append(model(data))
print("runs")
