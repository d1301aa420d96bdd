"""fresh18 (false): GS515 LunaBlack/KGAT-pytorch `main_kgat.py:129, 157` (one finding per optimizer).

Two optimizers over the same parameters, each loop zeroing after its own step:

    cf_optimizer = optim.Adam(model.parameters(), lr=args.lr)
    kg_optimizer = optim.Adam(model.parameters(), lr=args.lr)
    for epoch ...:
        for iter ...: cf_batch_loss.backward(); cf_optimizer.step(); cf_optimizer.zero_grad()
        for iter ...: kg_batch_loss.backward(); kg_optimizer.step(); kg_optimizer.zero_grad()

`kg_optimizer.zero_grad()` clears the gradients of every parameter `cf_optimizer` holds (the same tensors), and the
other way round, so neither step ever applies the other loss's gradients. The program checks that each step sees
exactly its own loss's gradient.
"""
import torch
import torch.nn as nn

model = nn.Linear(4, 1)
cf_optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
kg_optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for it in range(2):
        x = torch.randn(8, 4)
        cf_batch_loss = model(x).pow(2).mean()
        own = torch.autograd.grad(cf_batch_loss, model.weight, retain_graph=True)[0]
        cf_batch_loss.backward()
        assert torch.allclose(model.weight.grad, own), "cf step would apply a leftover gradient"
        cf_optimizer.step()
        cf_optimizer.zero_grad()
    for it in range(2):
        x = torch.randn(8, 4)
        kg_batch_loss = (model(x) - 1).abs().mean()
        own = torch.autograd.grad(kg_batch_loss, model.weight, retain_graph=True)[0]
        kg_batch_loss.backward()
        assert torch.allclose(model.weight.grad, own), "kg step would apply a leftover gradient"
        kg_optimizer.step()
        kg_optimizer.zero_grad()
print("3 epochs: every step applied only its own loss's gradient")
