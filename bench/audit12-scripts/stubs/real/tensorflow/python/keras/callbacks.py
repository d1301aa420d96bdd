class _Any:
    def set_model(self,m): self.model=m
    def __init__(self,*a,**k): self.model=None; self.history={}
    def __getattr__(self,n):
        return lambda *a,**k: None
class CallbackList(_Any): pass
class Callback(_Any): pass
class History(_Any): pass
class EarlyStopping(_Any): pass
class ModelCheckpoint(_Any): pass
