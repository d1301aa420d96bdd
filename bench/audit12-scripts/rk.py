import torch, numpy as np
from rlkit.torch.sac.sac import SACTrainer
from rlkit.torch.sac.policies import TanhGaussianPolicy
from rlkit.torch.networks import FlattenMlp
import types
o,a=3,2
env=types.SimpleNamespace(action_space=types.SimpleNamespace(shape=(a,)))
qf=lambda: FlattenMlp(input_size=o+a,output_size=1,hidden_sizes=[8])
pol=TanhGaussianPolicy(obs_dim=o,action_dim=a,hidden_sizes=[8])
t=SACTrainer(env=env,policy=pol,qf1=qf(),qf2=qf(),target_qf1=qf(),target_qf2=qf(),use_automatic_entropy_tuning=False)
b={k:torch.randn(4,n) for k,n in [('rewards',1),('terminals',1),('observations',o),('actions',a),('next_observations',o)]}
try:
    t.train_from_torch(b); print('ok')
except RuntimeError as e: print('RuntimeError',str(e)[:100])
