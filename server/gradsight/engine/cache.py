"""Whole-workspace checks: reading files, the on-disk cache, and parallel workers.

The cache lives in `.gradsight_cache/` under the project root. An entry is keyed by the file's path and
content, gradsight's version, the rule-data table and the settings, so any change to one of those
misses. Entries are written atomically (temp file + rename); a corrupt or unreadable entry is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import tempfile
from concurrent.futures import ProcessPoolExecutor
from typing import Optional

from .. import __version__
from ..config import Config
from ..findings import Finding

CACHE_DIR = ".gradsight_cache"
PARALLEL_MIN_FILES = 24


def _fingerprint(config: Config) -> str:
    from . import torchdb

    try:
        table = torchdb.DATA.stat().st_mtime_ns
    except OSError:
        table = 0
    # Rule files change findings too; their mtimes are cheap to read.
    rules_dir = pathlib.Path(__file__).resolve().parent.parent / "rules"
    rules = max((p.stat().st_mtime_ns for p in rules_dir.glob("*.py")), default=0)
    engine = max((p.stat().st_mtime_ns for p in pathlib.Path(__file__).resolve().parent.glob("*.py")), default=0)
    return f"{__version__}|{table}|{rules}|{engine}|{config!r}"


def _key(path: str, data: bytes, fingerprint: str) -> str:
    h = hashlib.sha256()
    h.update(fingerprint.encode())
    h.update(b"\0" + path.encode("utf-8", "surrogateescape") + b"\0")
    h.update(data)
    return h.hexdigest()


def _workspace(root: Optional[str]):
    from .workspace import Workspace

    return Workspace(root) if root is not None else None


def _analyse_one(path_str: str, config: Config, workspace, engine, rules) -> tuple[str, list[dict], list[str], dict]:
    from .sources import read_source

    path = pathlib.Path(path_str)
    text, problem = read_source(path)
    if text is None:
        return path_str, [], [problem or f"{path}: cannot read"], {}
    analysis = engine.analyze(text, path_str, config, workspace, rules)
    return path_str, [f.to_json() for f in analysis.findings], list(analysis.problems), analysis.dependencies


def _worker(job: tuple) -> list[tuple[str, list[dict], list[str], dict]]:
    """One batch of files in a worker process, sharing one workspace (its parsed imported files) for the batch:
    no per-process state is kept between batches."""
    from .engine import Engine

    paths, config, root, rules = job
    workspace = _workspace(root)
    engine = Engine()
    return [_analyse_one(p, config, workspace, engine, rules) for p in paths]


def _deps_fresh(deps: dict) -> bool:
    from .workspace import Workspace

    return all(Workspace.digest_of(p) == digest for p, digest in deps.items())


def check_files(files: list[pathlib.Path], config: Config, *, rules, engine=None, use_cache: bool = True,
                jobs: int = 0, root: Optional[pathlib.Path] = None) -> list[tuple[pathlib.Path, list[Finding], list[str]]]:
    """Analyse `files` with the rule set `rules` (`gradsight.analysis.RULES`), reusing `.gradsight_cache`
    entries. Files are analysed in this process by `engine` (a fresh `Engine` if none), or, when there are many,
    in worker processes with one `Engine` per batch."""
    if engine is None:
        from .engine import Engine

        engine = Engine()
    cache_dir = (root or pathlib.Path(".")) / CACHE_DIR
    fingerprint = _fingerprint(config) if use_cache else ""
    results: dict[str, tuple[list[dict], list[str], dict]] = {}
    root_s = str((root or pathlib.Path(".")).resolve())
    keys: dict[str, str] = {}
    todo: list[str] = []
    for f in files:
        p = str(f)
        if use_cache:
            try:
                data = f.read_bytes()
            except OSError:
                todo.append(p)
                continue
            key = _key(p, data, fingerprint)
            keys[p] = key
            entry = cache_dir / key[:2] / f"{key}.json"
            try:
                cached = json.loads(entry.read_text(encoding="utf-8"))
                deps = cached.get("dependencies", {})
                if _deps_fresh(deps):
                    results[p] = (cached["findings"], cached["problems"], deps)
                    continue
            except (OSError, ValueError, KeyError, TypeError):
                pass
        todo.append(p)
    workers = jobs if jobs > 0 else (os.cpu_count() or 1)
    if len(todo) >= PARALLEL_MIN_FILES and workers > 1:
        try:
            # Batches of consecutive files (neighbours import each other), a few per worker for balance.
            size = max(1, -(-len(todo) // (workers * 4)))
            batches = [(todo[k:k + size], config, root_s, rules) for k in range(0, len(todo), size)]
            # Load the rules here, once: forked workers inherit them instead of each importing (or, with no
            # bytecode written, compiling) every rule module in its first analysis.
            rules.active(config)
            with ProcessPoolExecutor(max_workers=workers) as pool:
                for batch in pool.map(_worker, batches):
                    for p, found, problems, deps in batch:
                        results[p] = (found, problems, deps)
        except (OSError, RuntimeError):  # no fork/semaphores available: fall back to one process
            workspace = _workspace(root_s)
            for p in todo:
                if p not in results:
                    _, found, problems, deps = _analyse_one(p, config, workspace, engine, rules)
                    results[p] = (found, problems, deps)
    else:
        workspace = _workspace(root_s)
        for p in todo:
            _, found, problems, deps = _analyse_one(p, config, workspace, engine, rules)
            results[p] = (found, problems, deps)
    if use_cache:
        for p in todo:
            if p in keys and p in results:
                _write_entry(cache_dir, keys[p], results[p])
    out = []
    for f in files:
        found, problems, _ = results.get(str(f), ([], [], {}))
        out.append((f, [Finding.from_json(d) for d in found], problems))
    return out


def _write_entry(cache_dir: pathlib.Path, key: str, value: tuple[list[dict], list[str], dict]) -> None:
    target = cache_dir / key[:2] / f"{key}.json"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        gitignore = cache_dir / ".gitignore"
        if not gitignore.exists():
            gitignore.write_text("*\n", encoding="utf-8")
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"findings": value[0], "problems": value[1], "dependencies": value[2]}, fh)
        os.replace(tmp, target)
    except OSError:
        pass  # a read-only tree just means no cache
