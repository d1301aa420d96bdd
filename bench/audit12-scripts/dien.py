import sys, torch, numpy as np
sys.argv=[sys.argv[0]]
import dien_t
from deepctr_torch.models.basemodel import BaseModel
from deepctr_torch.models.dien import DIEN
# isolate: wrap a single Parameter passed to add_regularization_* in a list (the separate #142 unbind bug)
for name in ('add_regularization_weight','add_regularization_loss'):
    if hasattr(BaseModel,name):
        orig=getattr(BaseModel,name)
        def wrap(self,w,*a,_o=orig,**k):
            if isinstance(w,torch.nn.Parameter): w=[w]
            return _o(self,w,*a,**k)
        setattr(BaseModel,name,wrap)
torch.manual_seed(0)
x,y,cols,beh=dien_t.get_xy_fd(use_neg=True)
m=DIEN(cols,beh,gru_type='AUGRU',use_negsampling=True,dnn_hidden_units=[4,4])
m.reg_loss=torch.zeros((1,))  # isolate from the init-time reg-loss bug (#111)
m.compile('adagrad','binary_crossentropy')
try:
    m.fit(x,y,batch_size=2,epochs=2,verbose=0); print('fit ok')
except RuntimeError as e: print('RuntimeError',str(e)[:120])
