import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(5, 3)
loss_fn = nn.CrossEntropyLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X_train = torch.randn(6, 5)
y_train = torch.tensor([0, 2, 1, 1, 0, 2])
train_logits = model(X_train)
train_preds = torch.softmax(train_logits, dim=1).argmax(dim=1).type(torch.float32)
loss = loss_fn(train_logits, y_train)
opt.zero_grad()
loss.backward()
opt.step()
