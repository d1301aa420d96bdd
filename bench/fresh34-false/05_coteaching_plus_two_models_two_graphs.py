"""fresh34 false: GS308 xingruiyu/coteaching_plus main.py:259 and main.py:261.

"This step changes parameters in place that a pending graph saved, so the backward at line 261 raises" (259)
and "This backward raises: the step at line 259 changed parameters its graph saved" (261). `optimizer1` holds
only clf1's parameters (main.py:335) and `optimizer2` only clf2's (main.py:350); clf1 and clf2 are two separate
instances (`CNN_small(num_classes)`, ..., `PreActResNet18(num_classes=200)` built twice). loss_coteaching and
loss_coteaching_plus (loss.py) make `loss_2` from `y_2`/`logits2` alone: the other network's output enters only
as sample indices (`np.argsort(loss_1.cpu().data)`, `torch.max(logits.data, 1)`), which carry no graph. So
`optimizer1.step()` changes nothing `loss_2`'s graph saved. The program runs main.py's train() verbatim
(`.cuda()` removed) with loss.py verbatim and model.py's CNN_small, in both regimes (epoch < init_epoch:
loss_coteaching; later: loss_coteaching_plus): every `loss_2.backward()` runs.
"""
from __future__ import print_function

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class _Args:
    dataset = 'cifar10'
    model_type = 'coteaching_plus'
    print_freq = 50
    n_epoch = 4


args = _Args()
model_str = 'cifar10_coteaching_plus'
init_epoch = 2
batch_size = 16
rate_schedule = np.linspace(0, 0.2, args.n_epoch)
noise_or_not = np.random.RandomState(0).rand(64) > 0.2
train_dataset = list(range(64))


# Loss functions
def loss_coteaching(y_1, y_2, t, forget_rate, ind, noise_or_not):
    loss_1 = F.cross_entropy(y_1, t, reduction='none')
    ind_1_sorted = np.argsort(loss_1.cpu().data)
    loss_1_sorted = loss_1[ind_1_sorted]

    loss_2 = F.cross_entropy(y_2, t, reduction='none')
    ind_2_sorted = np.argsort(loss_2.cpu().data)
    loss_2_sorted = loss_2[ind_2_sorted]

    remember_rate = 1 - forget_rate
    num_remember = int(remember_rate * len(loss_1_sorted))

    ind_1_update=ind_1_sorted[:num_remember].cpu()
    ind_2_update=ind_2_sorted[:num_remember].cpu()
    if len(ind_1_update) == 0:
        ind_1_update = ind_1_sorted.cpu().numpy()
        ind_2_update = ind_2_sorted.cpu().numpy()
        num_remember = ind_1_update.shape[0]

    pure_ratio_1 = np.sum(noise_or_not[ind[ind_1_update]])/float(num_remember)
    pure_ratio_2 = np.sum(noise_or_not[ind[ind_2_update]])/float(num_remember)

    loss_1_update = F.cross_entropy(y_1[ind_2_update], t[ind_2_update])
    loss_2_update = F.cross_entropy(y_2[ind_1_update], t[ind_1_update])

    return torch.sum(loss_1_update)/num_remember, torch.sum(loss_2_update)/num_remember, pure_ratio_1, pure_ratio_2

def loss_coteaching_plus(logits, logits2, labels, forget_rate, ind, noise_or_not, step):
    outputs = F.softmax(logits, dim=1)
    outputs2 = F.softmax(logits2, dim=1)

    _, pred1 = torch.max(logits.data, 1)
    _, pred2 = torch.max(logits2.data, 1)

    pred1, pred2 = pred1.cpu().numpy(), pred2.cpu().numpy()

    logical_disagree_id=np.zeros(labels.size(), dtype=bool)
    disagree_id = []
    for idx, p1 in enumerate(pred1): 
        if p1 != pred2[idx]:
            disagree_id.append(idx) 
            logical_disagree_id[idx] = True
    
    temp_disagree = ind*logical_disagree_id.astype(np.int64)
    ind_disagree = np.asarray([i for i in temp_disagree if i != 0]).transpose()
    try:
        assert ind_disagree.shape[0]==len(disagree_id)
    except:
        disagree_id = disagree_id[:ind_disagree.shape[0]]
     
    _update_step = np.logical_or(logical_disagree_id, step < 5000).astype(np.float32)
    update_step = Variable(torch.from_numpy(_update_step))

    if len(disagree_id) > 0:
        update_labels = labels[disagree_id]
        update_outputs = outputs[disagree_id] 
        update_outputs2 = outputs2[disagree_id] 
        
        loss_1, loss_2, pure_ratio_1, pure_ratio_2 = loss_coteaching(update_outputs, update_outputs2, update_labels, forget_rate, ind_disagree, noise_or_not)
    else:
        update_labels = labels
        update_outputs = outputs
        update_outputs2 = outputs2

        cross_entropy_1 = F.cross_entropy(update_outputs, update_labels)
        cross_entropy_2 = F.cross_entropy(update_outputs2, update_labels)

        loss_1 = torch.sum(update_step*cross_entropy_1)/labels.size()[0]
        loss_2 = torch.sum(update_step*cross_entropy_2)/labels.size()[0]
 
        pure_ratio_1 = np.sum(noise_or_not[ind])/ind.shape[0]
        pure_ratio_2 = np.sum(noise_or_not[ind])/ind.shape[0]
    return loss_1, loss_2, pure_ratio_1, pure_ratio_2  



class CNN_small(nn.Module):
    def __init__(self, num_classes=10):
        super(CNN_small, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, num_classes)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def accuracy(logit, target, topk=(1,)):
    """Computes the precision@k for the specified values of k"""
    output = F.softmax(logit, dim=1)
    maxk = max(topk)
    batch_size = target.size(0)

    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))

    res = []
    for k in topk:
        correct_k = correct[:k].view(-1).float().sum(0, keepdim=True)
        res.append(correct_k.mul_(100.0 / batch_size))
    return res


# Train the Model
def train(train_loader,epoch, model1, optimizer1, model2, optimizer2):
    print('Training %s...' % model_str)
    
    train_total=0
    train_correct=0 
    train_total2=0
    train_correct2=0 

    for i, (data, labels, indexes) in enumerate(train_loader):
        ind=indexes.cpu().numpy().transpose()
      
        labels = Variable(labels)
        
        if args.dataset=='news':
            data = Variable(data.long())
        else:
            data = Variable(data)
        # Forward + Backward + Optimize
        logits1=model1(data)
        prec1,  = accuracy(logits1, labels, topk=(1, ))
        train_total+=1
        train_correct+=prec1

        logits2 = model2(data)
        prec2,  = accuracy(logits2, labels, topk=(1, ))
        train_total2+=1
        train_correct2+=prec2
        if epoch < init_epoch:
            loss_1, loss_2, _, _ = loss_coteaching(logits1, logits2, labels, rate_schedule[epoch], ind, noise_or_not)
        else:
            if args.model_type=='coteaching_plus':
                loss_1, loss_2, _, _ = loss_coteaching_plus(logits1, logits2, labels, rate_schedule[epoch], ind, noise_or_not, epoch*i)

        optimizer1.zero_grad()
        loss_1.backward()
        optimizer1.step()
        optimizer2.zero_grad()
        loss_2.backward()
        optimizer2.step()
        if (i+1) % args.print_freq == 0:
            print('Epoch [%d/%d], Iter [%d/%d] Training Accuracy1: %.4F, Training Accuracy2: %.4f, Loss1: %.4f, Loss2: %.4f' 
                  %(epoch+1, args.n_epoch, i+1, len(train_dataset)//batch_size, prec1, prec2, loss_1.item(), loss_2.item()))

    train_acc1=float(train_correct)/float(train_total)
    train_acc2=float(train_correct2)/float(train_total2)
    return train_acc1, train_acc2


torch.manual_seed(0)
clf1, clf2 = CNN_small(10), CNN_small(10)
optimizer1 = torch.optim.Adam(clf1.parameters(), lr=0.001)
optimizer2 = torch.optim.Adam(clf2.parameters(), lr=0.001)
data = torch.randn(64, 3, 32, 32)
labels = torch.randint(0, 10, (64,))
train_loader = [(data[k:k + batch_size], labels[k:k + batch_size], torch.arange(k, k + batch_size))
                for k in range(0, 64, batch_size)]
w1, w2 = clf1.fc3.weight.detach().clone(), clf2.fc3.weight.detach().clone()
for epoch in range(args.n_epoch):                # epochs 0, 1: loss_coteaching; 2, 3: loss_coteaching_plus
    train(train_loader, epoch, clf1, optimizer1, clf2, optimizer2)
assert not torch.equal(w1, clf1.fc3.weight) and not torch.equal(w2, clf2.fc3.weight)
print("false: optimizer1.step() between the two backwards never touches loss_2's graph; all backwards ran")
