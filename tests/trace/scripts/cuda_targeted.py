# expect: clean with --device cpu; written for a GPU
import torch
import torch.nn as nn

device = torch.device("cuda")
model = nn.Linear(4, 2).cuda()
model.to("cuda:0")
x = torch.randn(8, 4, device="cuda")
y = torch.zeros(8, 2).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
assert isinstance(device, torch.device)
for step in range(3):
    out = model(x.to(device, non_blocking=True))
    loss = ((out - y.cuda()) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
assert out.device.type == ("cuda" if torch.cuda.is_available() else "cpu")  # --device cpu: is_available() is False
