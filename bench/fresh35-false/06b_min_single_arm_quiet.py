"""fresh35 false pair of 06: one for loop rebinding the module alias, no if/else: quiet with the base engine; runs."""
import torch
import torch.utils.data as data

ds = data.TensorDataset(torch.randn(8, 2), torch.zeros(8))
loader = data.DataLoader(ds, batch_size=4)
model = torch.nn.Linear(2, 3)
for flag in ["ensemble", "other"]:
    with torch.no_grad():
        for data, _ in loader:
            data = data.to("cpu")
            model(data)
print("runs")
