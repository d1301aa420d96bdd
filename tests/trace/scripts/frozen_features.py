# expect: only an information-level GS904 at line 13 (features under no_grad: usually deliberate)
import torch
import torch.nn as nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
head = nn.Linear(16, 2)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(4, 8)
    y = torch.randint(0, 2, (4,))
    with torch.no_grad():
        feats = backbone(x)
    loss = nn.functional.cross_entropy(head(feats), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
