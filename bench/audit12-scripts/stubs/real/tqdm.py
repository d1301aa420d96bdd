class tqdm:
    def __init__(self, it=None, *a, **k): self.it = it
    def __enter__(self): return self
    def __exit__(self, *a): return False
    def __iter__(self): return iter(self.it)
    def set_postfix(self, *a, **k): pass
    def update(self, *a, **k): pass
    def close(self): pass
