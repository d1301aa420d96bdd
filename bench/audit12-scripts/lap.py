import sys, importlib, torch
m=importlib.import_module('lap_'+sys.argv[1])
verts=torch.tensor([[0.,0,0],[1,0,0],[0,1,0],[0,0,1]],requires_grad=True)
faces=torch.tensor([[0,1,2],[0,1,3],[0,2,3],[1,2,3]])
try:
    L,inv=m.cot_laplacian(verts,faces)
    (torch.sparse.sum(L)+inv.sum()).backward(); print('ok', verts.grad.abs().sum().item())
except RuntimeError as e: print('RuntimeError',str(e)[:120])
