import torch, sys
from torch.optim import Adam
def run(set_to_none):
    torch.manual_seed(0)
    m=torch.nn.Linear(3,2); opt=Adam(m.parameters(), lr=0.0, eps=1e-4)
    def put_gradients(loss):
        # the parent's put_gradients_in_queue body (A3C.py:223-226), the queue replaced by a list
        opt.zero_grad(set_to_none=set_to_none); loss.backward(); torch.nn.utils.clip_grad_norm_(m.parameters(), 5.0)
        return [p.grad for p in m.parameters()]
    g1=put_gradients(m(torch.randn(4,3)).sum()); snap=[g.clone() for g in g1]
    put_gradients((m(torch.randn(4,3))**2).sum())
    return any(not torch.equal(a,b) for a,b in zip(g1,snap))
print('torch 2.13 default zero_grad(): queued grads changed by the next step:', run(True))
print('control zero_grad(set_to_none=False), the pre-2.0 default: changed:', run(False))
