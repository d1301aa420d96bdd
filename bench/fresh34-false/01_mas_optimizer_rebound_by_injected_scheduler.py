"""fresh34 false: GS415 x5 rahafaljundi/MAS-Memory-Aware-Synapses `optimizer = lr_scheduler(optimizer, epoch,lr)`
(General_utils/SGD_Training.py:58, MAS_utils/MAS_based_Training.py:301, MAS_utils/Objective_based_SGD.py:37, 209, 326).

"`optimizer` carries this step's graph into the next iteration, whose backward then raises". `lr_scheduler` is a
parameter of train_model; every caller (Finetune_SGD.py:73, MAS.py:90, 144, 208) passes `exp_lr_scheduler`, which
sets the learning rate in `optimizer.param_groups` and returns the same optimizer. No tensor, no graph. This
program runs SGD_Training.train_model's loop (train and val phases, several epochs) with the real exp_lr_scheduler
and an ordinary optimizer: every backward runs and the optimizer is the same object each epoch.
One change: `running_loss += loss.data[0]` (torch 0.3) is written `loss.item()`; as shipped, that line raises
IndexError ("invalid index of a 0-dim tensor") on current torch at the first batch, shown at the end.
"""
import torch
from torch import nn


def exp_lr_scheduler(optimizer, epoch, init_lr=0.0004, lr_decay_epoch=54):
    """Decay learning rate by a factor of 0.1 every lr_decay_epoch epochs."""
    lr = init_lr * (0.1**(epoch // lr_decay_epoch))
    if epoch % lr_decay_epoch == 0:
        print('LR is set to {}'.format(lr))
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    return optimizer


def train_model(model, criterion, optimizer, lr_scheduler, lr, dset_loaders, num_epochs):
    seen = []
    for epoch in range(0, num_epochs):
        for phase in ['train', 'val']:
            if phase == 'train':
                optimizer = lr_scheduler(optimizer, epoch, lr)
                seen.append(optimizer)
                model.train(True)
            else:
                model.train(False)
            running_loss = 0.0
            for data in dset_loaders[phase]:
                inputs, labels = data
                inputs = inputs.squeeze()
                optimizer.zero_grad()
                model.zero_grad()
                outputs = model(inputs)
                _, preds = torch.max(outputs.data, 1)
                loss = criterion(outputs, labels)
                if phase == 'train':
                    loss.backward()
                    optimizer.step()
                running_loss += loss.item()
    return seen


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.0008, momentum=0.9)
batches = [(torch.randn(4, 1, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
seen = train_model(model, nn.CrossEntropyLoss(), opt, exp_lr_scheduler, 0.0008,
                   {'train': batches, 'val': batches}, num_epochs=3)
assert all(o is opt for o in seen) and isinstance(seen[0], torch.optim.Optimizer)
assert not any(isinstance(o, torch.Tensor) for o in seen)
print("false: the rebound optimizer is the same torch.optim object every epoch; every backward ran")

loss = nn.CrossEntropyLoss()(model(batches[0][0].squeeze()), batches[0][1])
try:
    loss.data[0]
except IndexError as e:
    print("as shipped, `running_loss += loss.data[0]` raises first:", e)
