"""Install stub modules for missing third-party packages: STUB=name1,name2 (and their submodules)."""
import sys, os, types, importlib.abc, importlib.machinery
NAMES=[n for n in os.environ.get('STUB','').split(',') if n]
class _Meta(type):
    def __getattr__(cls,n):
        if n.startswith('__'): raise AttributeError(n)
        return _Meta(n,(object,),{'__init__':lambda s,*a,**k:None,'__call__':lambda s,*a,**k:None,'__bool__':lambda s:False})
    def __or__(cls,o): return cls
    def __ror__(cls,o): return cls
    def __getitem__(cls,k): return cls
class _Mod(types.ModuleType):
    def __getattr__(self,n):
        if n=='__version__': return '99.0.0'
        if n.startswith('__'): raise AttributeError(n)
        return _Meta(n,(object,),{'__init__':lambda s,*a,**k:None,'__call__':lambda s,*a,**k:None,'__bool__':lambda s:False})
class F(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self,name,path,target=None):
        if name.split('.')[0] in NAMES:
            return importlib.machinery.ModuleSpec(name,self,is_package=True)
    def create_module(self,spec):
        m=_Mod(spec.name); m.__path__=[]; return m
    def exec_module(self,m): pass
sys.meta_path.insert(0,F())
