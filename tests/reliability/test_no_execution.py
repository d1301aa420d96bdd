"""Static analysis never executes or imports the code it analyses: not through analyze_source (with or
without a Workspace resolving imports of sibling files), not through `gradsight check`, not through the
language server. Every piece of code below would leave a marker file if it ran.

(`python -m gradsight ...` started *inside* a hostile workspace is a separate problem, the cwd on
sys.path: see test_regressions.py::test_server_started_with_dash_m_does_not_import_workspace_modules.)
"""

from __future__ import annotations

import ast
import asyncio
import pathlib
import subprocess
import sys

import pytest

from gradsight.analysis import analyze_source

ROOT = pathlib.Path(__file__).resolve().parents[2]


def hostile_project(d: pathlib.Path) -> pathlib.Path:
    """A project whose every file would write d/MARKER_<what> if run or imported; returns main.py."""
    def marker(what: str) -> str:
        return repr(str(d / f"MARKER_{what}"))

    (d / "evil.py").write_text(f"open({marker('evil_import')}, 'w').write('x')\ndef helper(t):\n    return t * 2\n")
    (d / "pkg").mkdir()
    (d / "pkg" / "__init__.py").write_text(f"open({marker('pkg_init')}, 'w').write('x')\n")
    (d / "pkg" / "layers.py").write_text(
        f"import os\nos.system('touch ' + {marker('pkg_layers')})\n"
        "import torch.nn as nn\nclass Gate(nn.Module):\n    def forward(self, x):\n        return x.sigmoid_()\n")
    (d / "conftest.py").write_text(f"open({marker('conftest')}, 'w').write('x')\n")
    (d / "torch.py").write_text(f"open({marker('fake_torch')}, 'w').write('x')\n")  # shadows torch if imported
    main = d / "main.py"
    main.write_text(
        "import os, sys, subprocess, importlib\n"
        "import evil\n"
        "from evil import helper\n"
        "from pkg.layers import Gate\n"
        "from . import evil as relative_evil\n"
        "import torch\n"
        f"open({marker('top_level_open')}, 'w').write('x')\n"
        f"os.system('touch ' + {marker('os_system')})\n"
        f"subprocess.run(['touch', {marker('subprocess')}])\n"
        f"exec(\"open({marker('exec')}, 'w')\")\n"
        f"eval(\"open({marker('eval')}, 'w')\")\n"
        "__import__('evil')\n"
        "importlib.import_module('pkg')\n"
        f"print('PRINTED_BY_USER_CODE'); sys.stdout.write('PRINTED_BY_USER_CODE')\n"
        "class Meta(type):\n"
        f"    def __new__(m, *a):\n        open({marker('metaclass')}, 'w')\n        return type.__new__(m, *a)\n"
        "class C(metaclass=Meta):\n"
        f"    open({marker('class_body')}, 'w')\n"
        f"@(lambda f: open({marker('decorator')}, 'w'))\n"
        "def g():\n    pass\n"
        f"def default(x=open({marker('default_arg')}, 'w')):\n    pass\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "y = helper(x)\n"
        "z = Gate()(x)\n"
        "w = x.numpy()\n"
        "if __name__ == '__main__':\n"
        f"    open({marker('main_block')}, 'w')\n")
    return main


def markers(d: pathlib.Path) -> list[str]:
    return sorted(p.name for p in d.glob("MARKER_*"))


def test_analyze_source_runs_nothing(tmp_path, capfd):
    main = hostile_project(tmp_path)
    from gradsight.engine.workspace import Workspace

    for workspace in (None, Workspace(tmp_path)):
        analysis = analyze_source(main.read_text(), str(main), workspace=workspace)
        assert any(f.code == "GS201" for f in analysis.findings)  # it was analysed
    assert markers(tmp_path) == []
    loaded = [name for name, mod in list(sys.modules.items())
              if str(getattr(mod, "__file__", None) or "").startswith(str(tmp_path))]
    assert loaded == []
    out, err = capfd.readouterr()
    assert "PRINTED_BY_USER_CODE" not in out + err


def test_check_runs_nothing(tmp_path):
    main = hostile_project(tmp_path)
    # The console script (no cwd on sys.path), and `python -m` started from somewhere else.
    gradsight = pathlib.Path(sys.executable).with_name("gradsight")
    commands = [[str(gradsight), "check", "."]] if gradsight.exists() else []
    commands.append([sys.executable, "-m", "gradsight", "check", str(tmp_path)])
    for cmd, cwd in zip(commands, [tmp_path, ROOT]):
        proc = subprocess.run([*cmd, "--no-cache", "--output-format", "json"], cwd=cwd, capture_output=True,
                              text=True, timeout=120)
        assert "GS201" in proc.stdout, proc.stderr
        assert "PRINTED_BY_USER_CODE" not in proc.stdout + proc.stderr
    assert markers(tmp_path) == []
    assert main.exists()


def test_server_runs_nothing(tmp_path):
    gs_lsp = pytest.importorskip("gs_lsp")
    ok, why = gs_lsp.server_available()
    if not ok:
        pytest.skip(why)
    main = hostile_project(tmp_path)
    uri = main.as_uri()

    async def session():
        client = gs_lsp.RawLspClient(cwd=str(ROOT), stderr_path=str(tmp_path / "server-stderr.txt"))
        await client.start()
        try:
            await gs_lsp.initialize(client, tmp_path)
            for path in (main, tmp_path / "evil.py", tmp_path / "pkg" / "layers.py"):
                client.notify("textDocument/didOpen", {"textDocument": {
                    "uri": path.as_uri(), "languageId": "python", "version": 1, "text": path.read_text()}})
            diags = await client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            assert any(d["code"] == "GS201" for d in diags["result"]["items"])
            await client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                        "position": {"line": 24, "character": 4}})
            await client.request("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": {
                "start": {"line": 0, "character": 0}, "end": {"line": 40, "character": 0}}})
            await client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {
                "start": {"line": 0, "character": 0}, "end": {"line": 40, "character": 0}}, "context": {"diagnostics": []}})
            # gradsight.runTrace is the one feature that runs code, on purpose: refused for unsaved buffers and
            # untrusted workspaces (tests/lsp covers those); not called here.
            assert await client.stop() == 0
        finally:
            await client.kill()
        assert "PRINTED_BY_USER_CODE" not in client.stderr_text()

    asyncio.run(asyncio.wait_for(session(), 180))
    assert markers(tmp_path) == []


def _imports_of(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def _own_module(call: ast.Call) -> bool:
    """`importlib.import_module(f"{__name__}.{name}")`: gradsight loading its own rule modules."""
    arg = call.args[0] if call.args else None
    return (isinstance(arg, ast.JoinedStr) and bool(arg.values) and isinstance(arg.values[0], ast.FormattedValue)
            and isinstance(arg.values[0].value, ast.Name) and arg.values[0].value.id == "__name__")


def test_no_code_loading_machinery_in_the_analysis():
    """The analysis (engine, rules, CLI, server) never imports, execs or evals anything dynamically; the
    tracer (gradsight/trace), which runs the user's script on request, is the one exception."""
    pkg = ROOT / "server" / "gradsight"
    builtins = {"exec", "eval", "__import__", "compile"}
    loaders = {"import_module", "run_path", "run_module", "spec_from_file_location", "exec_module", "load_module",
               "load_source"}
    offenders = []
    # gradsight's own functions that happen to share a loader's name (`units.run_module` runs a unit of
    # module-level code) are not loaders.
    own = {n.name for p in pkg.rglob("*.py") for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for path in pkg.rglob("*.py"):
        rel = path.relative_to(pkg)
        if rel.parts[0] == "trace" or rel.name == "tracing.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                fn = node.func
                if isinstance(fn, ast.Name) and fn.id in builtins | (loaders - own):
                    offenders.append(f"{rel}:{node.lineno}: {fn.id}()")
                elif isinstance(fn, ast.Attribute) and fn.attr in loaders and not _own_module(node):
                    offenders.append(f"{rel}:{node.lineno}: .{fn.attr}()")
        if "runpy" in _imports_of(path):
            offenders.append(f"{rel}: imports runpy")
    assert offenders == []


def test_jedi_is_not_used_or_is_locked_down():
    """If the server ever uses jedi, it must not import or execute user code through it."""
    pkg = ROOT / "server" / "gradsight"
    users = [p for p in pkg.rglob("*.py") if "jedi" in _imports_of(p)]
    if not users:
        return  # gradsight does not use jedi (it is only a dependency); nothing to lock down
    import jedi

    for path in users:
        __import__("gradsight." + ".".join(path.relative_to(pkg).with_suffix("").parts).replace(".__init__", ""))
    # jedi is imported lazily, on the first question: load it the way the analysis does, then check.
    from gradsight.engine.libinfer import LibraryInference

    assert LibraryInference().available()
    assert list(jedi.settings.auto_import_modules) == [], jedi.settings.auto_import_modules
    assert not getattr(jedi.settings, "load_unsafe_extensions", False)
