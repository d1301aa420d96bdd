# From max-andr/square-attack post_avg/PADefense.py:199 (fresh7, first try at d79ed50).
# Finding: GS402 "This carries the previous iteration's graph, which the backward at line 203 frees. The next
# iteration's backward then raises".
# Why wrong: inside `for i in range(y.size(1))`, the backward is `retain_graph=True` when `i < y.size(1) - 1`
# and `retain_graph=False` only in the `else`, i.e. on the last iteration; no iteration follows the one that
# frees the graph (this program runs the real loop).
import torch
import torch.nn as nn


def findNeighbors_lastLy_vgg(model, sp, K):
    selected_list = []
    model = model.eval()
    x = sp.clone()
    x.requires_grad = True
    y = model(x)
    y = y.view(y.size(0), -1)

    for i in range(y.size(1)):
        x.grad = None
        goal = torch.abs(y[0, i])
        if i < y.size(1) - 1:
            goal.backward(retain_graph=True)
        else:
            goal.backward(retain_graph=False)
        d = torch.abs(y[0, i]) / torch.norm(x.grad)
        selected_list.append((d.clone().detach(), x.grad.clone().detach()))
        selected_list = sorted(selected_list, key=lambda x: x[0], reverse=False)
        selected_list = selected_list[0:K]
    return selected_list


print("ok", len(findNeighbors_lastLy_vgg(nn.Linear(4, 5), torch.randn(1, 4), 3)))
