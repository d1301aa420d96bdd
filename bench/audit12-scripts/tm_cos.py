import torch,sys,importlib
mod=importlib.import_module('cos_'+sys.argv[1])
mod._safe_matmul=lambda x,y: x@y.T
x=torch.randn(4,3,requires_grad=True)
for name,inp in [('leaf',x),('nonleaf',x*1)]:
    try:
        mod._pairwise_cosine_similarity_update(inp).sum().backward(); print(name,'ok')
    except RuntimeError as e: print(name,'RuntimeError:',str(e)[:100])
