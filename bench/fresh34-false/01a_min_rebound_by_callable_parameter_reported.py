import torch


def exp_lr_scheduler(optimizer, epoch, init_lr=0.0004, lr_decay_epoch=54):
    lr = init_lr * (0.1 ** (epoch // lr_decay_epoch))
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    return optimizer


def train_model(model, criterion, optimizer, lr_scheduler, lr, loader, num_epochs):
    for epoch in range(num_epochs):
        optimizer = lr_scheduler(optimizer, epoch, lr)
        for inputs, labels in loader:
            optimizer.zero_grad()
            loss = criterion(model(inputs), labels)
            loss.backward()
            optimizer.step()
    return model


if __name__ == "__main__":
    net = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    data = [(torch.randn(4, 3), torch.randint(0, 2, (4,))) for _ in range(2)]
    train_model(net, torch.nn.CrossEntropyLoss(), opt, exp_lr_scheduler, 0.1, data, 3)
    print("runs: every backward in every epoch")
