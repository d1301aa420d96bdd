# real RocStarLoss (catalyst recsys.py, parent 244b53dd / fix a84da9db) in a plain training loop
import sys, importlib, torch
mod = importlib.import_module(sys.argv[1]); torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(4, 1), torch.nn.Sigmoid())
opt = torch.optim.SGD(net.parameters(), lr=0.1); crit = mod.RocStarLoss()
for step in range(4):
    x = torch.randn(16, 4); y = torch.randint(2, (16, 1))
    loss = crit(net(x), y); opt.zero_grad(); loss.backward(); opt.step()
print(sys.argv[1], 'ran cleanly')
