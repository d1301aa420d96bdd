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
    code = ("import sys\nfrom gradsight.engine import analyze_source\nimport gradsight.cli\n"
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
    code = ("import sys\nfrom gradsight.engine.driver import analyze_source\n"
            "class NoRules:\n    def active(self, config): return []\n"
            "    def report_syntax_error(self, exc, reporter): pass\n"
            "    def report_skipped(self, *a): pass\n"
            "a = analyze_source('import torch\\nx = torch.randn(3, requires_grad=True)\\nx.add_(1)\\n', rules=NoRules())\n"
            "print(len(a.findings), sorted(m for m in sys.modules if m.startswith(('gradsight.rules', 'gradsight.cli', "
            "'gradsight.lsp', 'gradsight.fixes', 'gradsight.analysis'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "0 []", out
