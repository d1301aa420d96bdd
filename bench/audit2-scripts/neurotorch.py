# real neurotorch Lp/L2 regularization (parent b0bb731e / fix a44f658f), imports of pythonbasictools/callback/utils replaced by inline stand-ins; CPU params
import sys, importlib, torch
reg = importlib.import_module(sys.argv[1])
lin = torch.nn.Linear(3, 2)
r = reg.L2(lin.parameters(), Lambda=0.1, optimizer=torch.optim.SGD(lin.parameters(), lr=0.1)) if hasattr(reg, 'L2') else reg.Lp(lin.parameters(), p=2)
r.on_optimization_end(None)   # what the trainer callback does: reg_loss = self(); zero_grad; backward; step
print(sys.argv[1], 'ran cleanly')
