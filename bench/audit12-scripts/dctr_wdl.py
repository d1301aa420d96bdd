import sys, numpy as np, torch
from deepctr_torch.inputs import SparseFeat, DenseFeat
from deepctr_torch.models import WDL
torch.manual_seed(0)
cols=[SparseFeat('a',5),SparseFeat('b',4)]
try:
    m=WDL(cols,cols,dnn_hidden_units=(),task='binary')
except TypeError:
    cols=[SparseFeat('a',5,embedding_dim=4),SparseFeat('b',4,embedding_dim=4)]
    m=WDL(cols,cols,dnn_hidden_units=(),task='binary')
m.compile('adam','binary_crossentropy')
x={'a':np.random.randint(0,5,64),'b':np.random.randint(0,4,64)}
y=np.random.randint(0,2,64)
try:
    m.fit(x,y,batch_size=16,epochs=2,verbose=0); print('fit ok')
except RuntimeError as e: print('RuntimeError',str(e)[:120])
