"""Repositories of a round whose HEAD .py files (as library_heads checks them) unknown5's change can touch:
a file spelling `Variable(` and `requires_grad`, or a function under a decorator other than the neutral ones whose
body runs a backward.

    python bench/unknown5-repro/pick_repos.py /work/.mirror fresh8 fresh9 ...   # prints "round repo,repo,..."
"""
import ast, re, subprocess, sys, pathlib
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import library_heads as lh


def _has_backward(fn):
    """A backward under `fn` (the engine's `interp_util._has_backward`, restated: `.backward(`, `.grad(`,
    `.manual_backward(`, a bare `backward(...)`)."""
    for sub in ast.walk(fn):
        if isinstance(sub, ast.Call):
            f = sub.func
            if isinstance(f, ast.Attribute) and f.attr in ("backward", "grad", "manual_backward"):
                return sub.lineno
            if isinstance(f, ast.Name) and f.id == "backward" and sub.args:
                return sub.lineno
    return None
SKIP = ("torch.", "staticmethod", "classmethod", "property", "abstractmethod", "abc.", "functools.", "wraps",
        "pytest.", "typing.", "overload", "override", "dataclass", "no_grad", "enable_grad", "inference_mode",
        "click.", "hydra.", "unittest.", "contextlib.", "contextmanager", "lru_cache", "cache", "cached_property")
def decorated_trainers(tree):
    out = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.decorator_list:
            decs = [ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in n.decorator_list]
            if all(d.startswith(SKIP) for d in decs):
                continue
            if _has_backward(n) is not None:
                out.append((n.name, n.lineno, decs))
    return out
def scan(name, mirrors):
    git = pathlib.Path(mirrors) / name.replace('/', '+') / 'repo'
    if not git.is_dir(): return None
    listing = subprocess.run(["git", "-C", str(git), "ls-tree", "-r", "HEAD"], capture_output=True, text=True).stdout.splitlines()
    hits = []
    for row in listing:
        meta, _, path = row.partition("\t")
        mode, kind, sha = meta.split()
        if kind != "blob" or mode == "120000" or not path.endswith(".py") or lh._skipped(path): continue
        src = subprocess.run(["git", "-C", str(git), "cat-file", "blob", sha], capture_output=True).stdout.decode('utf-8', 'replace')
        why = []
        if 'Variable(' in src and 'requires_grad' in src: why.append('Variable')
        if '.backward(' in src or '.grad(' in src or 'manual_backward' in src:
            try: t = ast.parse(src)
            except Exception: t = None
            if t is not None:
                d = decorated_trainers(t)
                if d: why.append('deco:' + ','.join(f"{a}@{b}:{c}" for a, b, c in d)[:200])
        if why: hits.append((path, why))
    return hits
rounds = sys.argv[2:]
for r in rounds:
    repos = getattr(lh, r.upper())
    sel = []
    for name in repos:
        h = scan(name, sys.argv[1])
        if h:
            sel.append(name)
            for p, w in h: print(r, name, p, w, file=sys.stderr)
    print(r, ','.join(sel))
