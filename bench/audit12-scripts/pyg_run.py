import sys,importlib,torch
m=importlib.import_module('pyg_'+sys.argv[1])
adj=torch.rand(2,3,3,requires_grad=True)
try:
    ei,ea=m.dense_to_sparse(adj); ea.sum().backward(); print('ok')
except RuntimeError as e: print('RuntimeError',str(e)[:100])
