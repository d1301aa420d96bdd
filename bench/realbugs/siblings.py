"""Record, per real-bug case, the sibling files an analysis needs to resolve the case file's own imports.

    .venv/bin/python bench/realbugs/siblings.py --mirrors /work/.mirror    # rewrites manifest.json's `siblings`

For each case file this reads the buggy version (the parent commit) from a local git mirror, parses its
imports with `ast`, and keeps every module of the same repository that they name (`from . import x`,
`from ..pkg.mod import y`, `import pkg.mod` and `from pkg.mod import z` where `pkg` is the file's own
top-level package), plus the `__init__.py` files of the case file's packages, one level deep. It records
their paths and the sha256 of both versions (parent and fixing commit; `null` where a file does not exist
at that commit); bench/realbugs/score.py materialises them next to the case files, so a project-aware
analysis can resolve the imports. Findings on sibling files are not scored.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import pathlib
import posixpath
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"


def _git_dir(mirrors: pathlib.Path, repo: str) -> pathlib.Path:
    base = mirrors / repo.replace("/", "+") / "repo"
    return base / ".git" if (base / ".git" / "HEAD").is_file() else base


def _show(git_dir: pathlib.Path, commit: str, path: str) -> bytes | None:
    proc = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True)
    return proc.stdout if proc.returncode == 0 else None


def _tree(git_dir: pathlib.Path, commit: str) -> set[str]:
    out = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", commit],
                         capture_output=True, text=True, check=True).stdout
    return set(out.splitlines())


def _module_paths(module: str, tree: set[str]) -> list[str]:
    base = module.replace(".", "/")
    return [p for p in (base + ".py", base + "/__init__.py") if p in tree]


def imported_files(path: str, source: str, tree: set[str]) -> list[str]:
    """Repository files that the imports of `path` name (one level), and its packages' __init__.py."""
    try:
        mod = ast.parse(source)
    except SyntaxError:
        return []
    pkg_dir = posixpath.dirname(path)
    top = path.split("/", 1)[0] if "/" in path else ""
    found: set[str] = set()
    # The package chain of the file itself.
    d = pkg_dir
    while d:
        init = d + "/__init__.py"
        if init in tree:
            found.add(init)
        d = posixpath.dirname(d)
    for node in ast.walk(mod):
        modules: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg_dir
                for _ in range(node.level - 1):
                    base = posixpath.dirname(base)
                prefix = base.replace("/", ".")
                name = f"{prefix}.{node.module}" if node.module and prefix else (node.module or prefix)
                modules.append(name)
                modules += [f"{name}.{a.name}" for a in node.names]
            elif node.module:
                modules.append(node.module)
                modules += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            modules += [a.name for a in node.names]
        for m in modules:
            if not m:
                continue
            # A module of the repository (`pkg.mod` from the root), or a sibling module of a flat script
            # folder (`import net` next to `train.py`).
            found.update(_module_paths(m, tree))
            if pkg_dir and not (isinstance(node, ast.ImportFrom) and node.level):
                found.update(_module_paths(pkg_dir.replace("/", ".") + "." + m, tree))
    found.discard(path)
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", type=pathlib.Path, required=True)
    args = ap.parse_args(argv)
    data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    for case in data["cases"]:
        git_dir = _git_dir(args.mirrors, case["repo"])
        tree = _tree(git_dir, case["parent"])
        own = {f["path"] for f in case["files"]}
        sibs: set[str] = set()
        for f in case["files"]:
            src = _show(git_dir, case["parent"], f["path"])
            sibs.update(imported_files(f["path"], (src or b"").decode("utf-8", "replace"), tree))
        entries = []
        for path in sorted(sibs - own):
            b = _show(git_dir, case["parent"], path)
            x = _show(git_dir, case["commit"], path)
            entries.append({"path": path, "buggy_sha256": hashlib.sha256(b).hexdigest() if b is not None else None,
                            "fixed_sha256": hashlib.sha256(x).hexdigest() if x is not None else None})
        case["siblings"] = entries
        print(f"{case['id']}: {len(entries)} sibling files")
    MANIFEST.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
