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
