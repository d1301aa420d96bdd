"""The architecture's invariants, checked on the import graph (docs/ARCHITECTURE.md)."""

import ast
import pathlib
import subprocess
import sys

PKG = pathlib.Path(__file__).resolve().parent.parent / "server" / "gradsight"


def imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


def modules():
    return [p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts]


def test_only_lsp_imports_pygls():
    for p in modules():
        if "lsp" in p.relative_to(PKG).parts:
            continue
        assert not imports(p) & {"pygls", "lsprotocol"}, p


def test_analysis_never_imports_torch_or_numpy():
    for p in modules():
        rel = p.relative_to(PKG).parts
        if rel[0] == "trace":
            continue
        assert not imports(p) & {"torch", "numpy"}, p


def test_trace_runner_imports_only_stdlib_and_torch():
    runner = PKG / "trace" / "runner.py"
    if not runner.exists():
        return
    allowed = set(sys.stdlib_module_names) | {"torch", "numpy"}
    assert imports(runner) <= allowed, imports(runner) - allowed
    parent = PKG / "trace" / "__init__.py"
    assert "torch" not in imports(parent)


def test_check_does_not_load_torch_or_pygls():
    code = ("import sys\nfrom gradsight.analysis import analyze_source\nimport gradsight.cli\n"
            "analyze_source('import torch\\nx = torch.randn(3, requires_grad=True)\\nx.add_(1)\\n')\n"
            "print(sorted(m for m in ('torch', 'numpy', 'pygls', 'lsprotocol') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


# The analysis layer: `engine/` may import the standard library, its own modules and the shared leaf modules
# (config, findings, the package's __version__), never the layers built on it.
UPPER_LAYERS = {"rules", "lsp", "cli", "fixes", "analysis", "trace"}


def imported_modules(path: pathlib.Path, package: str) -> set[str]:
    """Absolute dotted names of every module `path` imports, relative imports resolved against `package`.

    `from .. import cli` names the module `gradsight.cli`; `from ..rules import x` names `gradsight.rules` and
    `gradsight.rules.x` (x may be a submodule); imports inside functions count too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.add(module)
            out |= {f"{module}.{a.name}" for a in node.names}
    return out


def layer_violations(path: pathlib.Path, package: str = "gradsight.engine") -> set[str]:
    bad = set()
    for name in imported_modules(path, package):
        parts = name.split(".")
        if parts[0] == "gradsight" and len(parts) > 1 and parts[1] in UPPER_LAYERS:
            bad.add(name)
    return bad


def test_engine_imports_no_upper_layer():
    engine = PKG / "engine"
    for p in engine.rglob("*.py"):
        if "__pycache__" in p.parts:
            continue
        package = "gradsight." + ".".join(p.relative_to(PKG).parts[:-1])
        assert not layer_violations(p, package), (p, layer_violations(p, package))


def test_layer_check_sees_relative_imports(tmp_path):
    # The check itself must catch the forms a refactor would plausibly write.
    for bad, expect in [("from ..rules import all_rules\n", "gradsight.rules"),
                        ("from .. import cli\n", "gradsight.cli"),
                        ("def f():\n    from ..lsp.session import Session\n", "gradsight.lsp.session"),
                        ("import gradsight.fixes\n", "gradsight.fixes"),
                        ("from ...gradsight.rules import x\n", None)]:
        f = tmp_path / "mod.py"
        f.write_text(bad)
        found = layer_violations(f)
        if expect is None:
            continue  # beyond the top-level package: not a gradsight import at all
        assert expect in found, (bad, found)
    f = tmp_path / "ok.py"
    f.write_text("from ..config import Config\nfrom . import values\nfrom ..findings import Finding\n")
    assert layer_violations(f) == set()


def test_engine_analysis_runs_without_rules_imported():
    # The engine with a rule set handed in never loads `rules/`: the dependency is one-way at run time too.
    code = ("import sys\nfrom gradsight.engine import Engine\n"
            "class NoRules:\n    def active(self, config): return []\n"
            "    def report_syntax_error(self, exc, reporter): pass\n"
            "    def report_skipped(self, *a): pass\n"
            "a = Engine().analyze('import torch\\nx = torch.randn(3, requires_grad=True)\\nx.add_(1)\\n', rules=NoRules())\n"
            "print(len(a.findings), sorted(m for m in sys.modules if m.startswith(('gradsight.rules', 'gradsight.cli', "
            "'gradsight.lsp', 'gradsight.fixes', 'gradsight.analysis'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "0 []", out


_MUTATORS = {"add", "append", "extend", "update", "setdefault", "pop", "popitem", "clear", "remove", "discard",
             "insert", "appendleft", "move_to_end", "__setitem__"}
_STATEFUL = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "Counter", "WeakKeyDictionary",
             "WeakValueDictionary", "WeakSet", "ChainMap"}


def _module_level_mutables(tree: ast.Module) -> dict:
    """Names bound at module level to a mutable container (literal, comprehension or constructor call)."""
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            v = node.value
            call = v.func.attr if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) else (
                v.func.id if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) else None)
            if isinstance(v, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)) \
                    or call in _STATEFUL:
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    if isinstance(t, ast.Name):
                        out[t.id] = node.lineno
    return out


def engine_cache_violations(sources: dict) -> list:
    """For {file name: source} of the analysis layer: cache decorators, module-level objects of the engine's own
    stateful classes, and writes from any function into a module-level container (tables are built at import
    and never change afterwards; every cache belongs to an `Engine`)."""
    problems = []
    trees = {name: ast.parse(text) for name, text in sources.items()}
    mutable = {n for tree in trees.values() for n in _module_level_mutables(tree) if n != "__all__"}
    own_classes = {n.name for tree in trees.values() for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    for name, tree in trees.items():
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
                f = node.value.func
                called = f.id if isinstance(f, ast.Name) else (f.attr if isinstance(f, ast.Attribute) else "")
                if called in own_classes and called not in ("PyVal", "UnknownVal"):
                    problems.append(f"{name}:{node.lineno}: module-level {called}() instance")
        for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for d in fn.decorator_list:
                text = ast.unparse(d)
                if "cache" in text and "cached_property" not in text:
                    problems.append(f"{name}:{fn.lineno}: @{text} on {fn.name}")
            for n in ast.walk(fn):
                target = None
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MUTATORS:
                    target = n.func.value
                elif isinstance(n, (ast.Assign, ast.AugAssign, ast.Delete)):
                    for t in (n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target]):
                        if isinstance(t, ast.Subscript):
                            target = t.value
                elif isinstance(n, ast.Global):
                    problems.extend(f"{name}:{n.lineno}: global {g} in {fn.name}" for g in n.names)
                ref = target.id if isinstance(target, ast.Name) else (
                    target.attr if isinstance(target, ast.Attribute) else None)
                if ref in mutable and not (isinstance(target, ast.Attribute)
                                           and isinstance(target.value, ast.Name) and target.value.id == "self"):
                    problems.append(f"{name}:{n.lineno}: {fn.name} writes into module-level {ref}")
    return problems


def test_no_module_level_mutable_cache_in_the_analysis_layer():
    sources = {p.name: p.read_text(encoding="utf-8") for p in sorted((PKG / "engine").glob("*.py"))}
    assert engine_cache_violations(sources) == []


def test_the_cache_check_sees_caches():
    """The check itself: each way of keeping state in a module is reported."""
    bad = {
        "a.py": "import functools\n_SEEN = {}\n\n\n@functools.lru_cache(maxsize=None)\ndef f(x):\n    return x\n\n\n"
                "def g(k, v):\n    _SEEN[k] = v\n",
        "b.py": "class Engine:\n    pass\n\n\nDEFAULT = Engine()\nNAMES = set()\n\n\ndef h(n):\n    NAMES.add(n)\n",
        "c.py": "from . import a\n_N = 0\n\n\ndef k():\n    global _N\n    a._SEEN.clear()\n",
    }
    found = engine_cache_violations(bad)
    assert any("lru_cache" in p for p in found)
    assert any("writes into module-level _SEEN" in p and p.startswith("a.py") for p in found)
    assert any("module-level Engine() instance" in p for p in found)
    assert any("writes into module-level NAMES" in p for p in found)
    assert any("global _N" in p for p in found)
    assert any(p.startswith("c.py") and "_SEEN" in p for p in found)
    assert engine_cache_violations({"ok.py": "TABLE = {'a': 1}\n\n\ndef f(k):\n    return TABLE.get(k)\n"}) == []


def test_tests_and_benchmarks_use_the_engines_public_names_only():
    """Tests and benchmarks reach the engine through its public names (the façade, `Engine`, documented
    modules), never through `_private` ones: the engine's internals can change without breaking them."""
    root = PKG.parent.parent
    offenders = []
    for folder in ("tests", "bench", "scripts"):
        for path in (root / folder).rglob("*.py"):
            if ".corpus" in path.parts or ".trees" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            engine_aliases = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gradsight.engine"):
                    offenders += [f"{path.relative_to(root)}:{node.lineno}: {a.name}" for a in node.names
                                  if a.name.startswith("_")]
                    engine_aliases.update(a.asname or a.name for a in node.names)
                elif isinstance(node, ast.Import):
                    engine_aliases.update(a.asname for a in node.names if a.asname and a.name.startswith("gradsight.engine"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id in engine_aliases and node.attr.startswith("_") \
                        and not node.attr.startswith("__"):
                    offenders.append(f"{path.relative_to(root)}:{node.lineno}: {node.value.id}.{node.attr}")
    assert offenders == []
