"""Cross-file resolution: `from .helpers import normalise` and `from mypkg.layers import Gate` find the
workspace file that defines them, so calls into it are analysed like local ones.

Only the imported file's *definitions* are read (its functions, classes and imports, from the stdlib
`ast`); its module body is never run, not even abstractly, and nothing is ever imported or executed.
Parsed files are cached by (path, content hash); an editor passes its unsaved buffers as `overlays`, so
summaries follow what the user sees. Unresolvable imports stay UNKNOWN.
"""

from __future__ import annotations

import ast
import hashlib
import os
import pathlib
import re
import threading
import time
from typing import Callable, Optional

from .newsyntax import parse_rewritten
from .report import Source

MAX_FILE_BYTES = 2_000_000
FIND_TTL = 2.0  # seconds an import resolution is trusted
LIST_TTL = 2.0  # seconds the list of the workspace's files, and what other files call under no_grad, are trusted
MAX_LISTED = 5000  # a workspace with more Python files than this is not searched for callers
# Folders never searched for callers: tool caches, environments, installed packages, builds.
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "venv", "env", "build", "dist"})
_GRAD_OFF_WORDS = ("no_grad", "inference_mode", "set_grad_enabled")


def _module_file(base: pathlib.Path, parts: list) -> bool:
    target = base.joinpath(*parts)
    return target.with_suffix(".py").is_file() or (target / "__init__.py").is_file()


def _stem(target: pathlib.Path) -> str:
    """The name a module at `target` is imported by (its folder's for a package's `__init__.py`)."""
    return target.parent.name if target.name == "__init__.py" else target.stem


class Workspace:
    def __init__(self, root: str | pathlib.Path, overlays: Optional[dict[str, str]] = None, libinfer: bool = True):
        self.root = pathlib.Path(root).resolve()
        self.overlays: dict[str, str] = dict(overlays or {})
        self._cache: dict[str, tuple[str, object]] = {}
        self._disk: dict[str, tuple[tuple[int, int], str]] = {}
        self._found: dict[tuple, tuple[Optional[pathlib.Path], float]] = {}
        self.found_generation = 0  # bumped whenever `_found` is cleared (memos of its answers then go stale)
        self._parent_of: dict[str, str] = {}  # path -> its folder (`find`'s key for absolute imports)
        # `units.import_digests` answers: key -> (answer, time of the oldest `find` answer used, `found_generation`,
        # (file, scope, digest) of each workspace file read); see `units.import_digests`.
        self.import_memo: dict = {}
        self._digests: dict[int, tuple[str, str]] = {}  # id(text) -> (text, sha1): texts are reused objects
        self._lock = threading.Lock()
        # What other files call where grad mode may be off (`no_grad_callers`): the file list (time, paths), per
        # file (its text object, whether it holds a grad-mode word), per file with the words (digest, names it calls
        # under no_grad, its imports), and per asking file the answer with its time.
        self._listing: Optional[tuple[float, tuple]] = None
        self._words: dict[str, tuple[str, bool]] = {}
        self._off_calls: dict[str, tuple[str, frozenset, tuple]] = {}
        self._names_stem: dict[tuple, tuple[str, bool]] = {}  # (file, module name) -> (text, imports that name?)
        self._callers: dict[str, tuple[float, frozenset, dict, tuple]] = {}  # path -> (time, names, read, stems)
        self._importers: dict[str, tuple[float, tuple]] = {}  # path -> (time, files importing it: `importers`)
        # path -> (signature, names, read, the worded texts kept alive so their ids stay theirs): `no_grad_callers`'
        # files one import further.
        self._further: dict[str, tuple] = {}
        # file -> (digest, what `reverse.caller_stores` read of it: the attributes it stores on objects it holds, the
        # workspace files it imports), kept per text version.
        self.stores_memo: dict[str, tuple] = {}
        # Library inference is on unless the caller or GRADSIGHT_NO_LIBINFER=1 (for comparisons) turns it off.
        self._libinfer = None if libinfer and os.environ.get("GRADSIGHT_NO_LIBINFER", "") in ("", "0") else False

    @property
    def libinfer(self):
        """The workspace's `LibraryInference` (jedi, lazy; None when off): answers cached per file version."""
        if self._libinfer is None:
            from .libinfer import LibraryInference

            self._libinfer = LibraryInference(str(self.root))
        return self._libinfer or None

    def set_overlay(self, path: str, text: Optional[str]) -> None:
        key = str(pathlib.Path(path).resolve())
        before = self._text(pathlib.Path(key)) if self._callers else None  # the buffer's, else the file's on disk
        with self._lock:
            self._forget_callers(key, before, text)
            for target in [t for t in self._importers if t != key]:
                self._importers.pop(target, None)  # this buffer may start or stop importing it
            if (key in self.overlays) != (text is not None):
                self._found.clear()  # a buffer opened or closed may make an import resolvable (not an edit)
                self.found_generation += 1
            if text is None:
                self.overlays.pop(key, None)
            else:
                self.overlays[key] = text
            if text is None or key not in (self._listing[1] if self._listing else ()):
                self._listing = None

    def _forget_callers(self, key: str, old: Optional[str], new: Optional[str]) -> None:
        """A buffer's text changes from `old` to `new`: forget the `no_grad_callers` answers it may change, those
        for modules whose name either text holds, where either holds a grad-mode word (substring tests only: this
        runs on every keystroke in an editor)."""
        if not self._callers:
            return
        texts = [t for t in (old, new) if t]
        if not any(w in t for t in texts for w in _GRAD_OFF_WORDS):
            return
        for target, entry in list(self._callers.items()):
            if target != key and any(stem in t for stem in entry[3] for t in texts):  # its own text is not read
                self._callers.pop(target, None)

    def _text(self, path: pathlib.Path) -> Optional[str]:
        key = str(path)
        overlay = self.overlays.get(key)  # .get: the editor may close the buffer while we read
        if overlay is not None:
            return overlay
        try:
            st = path.stat()
            if st.st_size > MAX_FILE_BYTES:
                return None
            # Files on disk are re-read only when their size or mtime changes (analyses run per keystroke).
            stamp = (st.st_mtime_ns, st.st_size)
            with self._lock:
                hit = self._disk.get(key)
            if hit is not None and hit[0] == stamp:
                return hit[1]
            text = path.read_text(encoding="utf-8")
            with self._lock:
                self._disk[key] = (stamp, text)
            return text
        except (OSError, UnicodeDecodeError):
            return None

    def find(self, module: str, level: int, from_path: str, stamps: Optional[list] = None) -> Optional[pathlib.Path]:
        """The workspace file `module` names (relative to `from_path` when `level` > 0), or None. Answers are
        kept for a couple of seconds: an analysis asks about the same imports many times, and files appear
        or vanish far more slowly than keystrokes. `stamps`: a list the time of the answer is appended to."""
        # Absolute imports also look beside the importing file, so the answer depends on its folder.
        if level:
            folder = from_path
        else:
            folder = self._parent_of.get(from_path)
            if folder is None:
                if len(self._parent_of) > 4096:
                    self._parent_of.clear()
                folder = self._parent_of[from_path] = str(pathlib.Path(from_path).parent)
        key = (module, level, folder)
        now = time.monotonic()
        hit = self._found.get(key)
        if hit is not None and now - hit[1] < FIND_TTL:
            if stamps is not None:
                stamps.append(hit[1])
            return hit[0]
        found = self._find(module, level, from_path)
        self._found[key] = (found, now)
        if stamps is not None:
            stamps.append(now)
        return found

    def found_current(self, oldest: float, generation: int) -> bool:
        """Whether `find` answers given at time `oldest` or later, under `found_generation` `generation`, are all
        still the answers `find` gives now (none expired, none forgotten)."""
        return generation == self.found_generation and time.monotonic() - oldest < FIND_TTL

    def _find(self, module: str, level: int, from_path: str) -> Optional[pathlib.Path]:
        parts = [p for p in module.split(".") if p]
        if level > 0:
            base = pathlib.Path(from_path).resolve().parent
            for _ in range(level - 1):
                base = base.parent
            bases = [base]
        siblings = None  # the importing file's folder: searched even outside the workspace
        package_root = None  # the folder above the importing file's package: likewise
        if level == 0:
            bases = [self.root, self.root / "src"]
            # `python train.py` puts train.py's folder first on sys.path, so `import net` / `from model import
            # Net` next to a script resolve to the sibling files even in a folder with no project marker (the
            # workspace root may be elsewhere). torch itself is never looked for beside the script.
            if from_path and not from_path.startswith("<") and parts and parts[0] != "torch":
                here = pathlib.Path(from_path).resolve().parent
                if here not in bases:
                    bases.insert(0, here)
                    siblings = here
                # A package below the workspace root (`src/pkg/`, `lib/pkg/`, a vendored checkout): the nearest
                # folder above the importing file that holds the import's top-level package is an import root.
                for anc in here.parents:
                    if anc in bases or not anc.is_relative_to(self.root):
                        break
                    if (anc / parts[0] / "__init__.py").is_file() or (anc / f"{parts[0]}.py").is_file() \
                            or len(parts) > 1 and (anc / parts[0]).is_dir() and _module_file(anc, parts):
                        # (the last: a folder without `__init__.py`, a namespace package, that holds the module)
                        bases.append(anc)
                        break
                # The folder above the package that holds the importing file (`pkg/models/net.py` importing
                # `pkg.models.utils`), even outside the workspace: where `python -m pkg...` or an installed
                # checkout puts it on sys.path.
                top = here
                for _ in range(8):
                    if not (top / "__init__.py").is_file():
                        break
                    top = top.parent
                if top != here and top not in bases and (top / parts[0] / "__init__.py").is_file():
                    bases.append(top)
                    package_root = top
        for base in bases:
            target = base.joinpath(*parts) if parts else base
            for candidate in (target.with_suffix(".py") if parts else None, target / "__init__.py"):
                if candidate is not None and candidate.is_file():
                    try:
                        candidate.resolve().relative_to(self.root)
                    except ValueError:
                        if level == 0 and base != siblings and base != package_root:
                            continue  # absolute imports resolve only inside the workspace
                    return candidate.resolve()
        return None

    def scope_for(self, path: pathlib.Path):
        from .driver import build_scope

        text = self._text(path)
        if text is None:
            return None
        known = self._digests.get(id(text))
        if known is not None and known[0] is text:
            digest = known[1]
        else:
            digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
            self._digests[id(text)] = (text, digest)
            if len(self._digests) > 4096:
                self._digests.clear()
        key = str(path)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached[0] == digest:
                return cached[1]
        try:
            tree = ast.parse(text, filename=key)
        except SyntaxError as exc:
            tree = parse_rewritten(text, exc)  # Python 3.12 syntax on an older Python (`newsyntax`)
            if tree is None:
                return None
        except (ValueError, RecursionError, MemoryError):
            return None
        scope = build_scope(tree, key, Source(text))
        with self._lock:
            self._cache[key] = (digest, scope)
        return scope

    def resolver(self, from_path: str, used: Optional[dict] = None, home=None) -> Callable:
        """A resolve(module, level, from_scope) function; every file it reads is recorded in `used`
        (path -> sha1 of the text), so caches can tell when an imported file changed. `home`: the analysed file's
        scope, which its own path then resolves to (another file's code that imports it, run by `reverse.py`)."""
        # The analysed file never resolves to itself (computed once: `resolve()` stats every path component, and
        # resolution is asked for every imported name an analysis reads).
        me = str(pathlib.Path(from_path).resolve())

        def resolve(module: str, level: int, from_scope) -> object:
            origin = getattr(from_scope, "path", from_path) or from_path
            found = self.find(module, level, origin)
            if found is None or str(found) == me:
                return home if found is not None else None
            scope = self.scope_for(found)
            if used is not None and scope is not None:
                used[str(found)] = self._cache[str(found)][0]
            return scope

        return resolve

    def python_files(self) -> tuple:
        """The workspace's Python files (resolved paths, open buffers included), listed again at most every
        `LIST_TTL` seconds; () when there are more than `MAX_LISTED` (then no caller is looked for)."""
        now = time.monotonic()
        listing = self._listing
        if listing is not None and now - listing[0] < LIST_TTL:
            return listing[1]
        found: list[str] = []
        for folder, dirs, files in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
            found.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(".py"))
            if len(found) > MAX_LISTED:
                found = []
                break
        root = str(self.root)
        for key in list(self.overlays):
            if key.endswith(".py") and key.startswith(root) and key not in found:
                found.append(key)
        out = tuple(found)
        self._listing = (now, out)
        return out

    def no_grad_callers(self, path: str, scan: Callable) -> tuple[frozenset, dict]:
        """The names of functions and methods that other workspace files importing `path` call where grad mode may
        be off, with those files (path -> digest of the text read, for `Analysis.dependencies`). `scan(scope)` gives
        one file's names (`nograd_calls.called_without_grad`). Lazy and cached: a file is parsed only if its text holds a
        grad-mode word and the name of the module at `path`, once per version; the answer is kept `LIST_TTL`
        seconds (forgotten when a buffer that may call into `path` changes: `_forget_callers`). Files added since
        are not seen until then, like imports.

        Files one import further count too: run.py imports tagger.py, which imports crf.py, and run.py calls
        `model.crf.decode(...)` under `no_grad` on the model tagger.py builds from crf.py's class. Such a file is
        read only when it holds a grad-mode word and imports a file that imports `path` (`importers`)."""
        try:
            target = pathlib.Path(path).resolve()
            target.relative_to(self.root)
        except (OSError, ValueError, RuntimeError):
            return frozenset(), {}
        key = str(target)
        now = time.monotonic()
        hit = self._callers.get(key)
        if hit is not None and now - hit[0] < LIST_TTL:
            return hit[1], hit[2]
        names: set = set()
        read: dict = {}
        worded = self._worded_files()
        self._off_names_into(target, worded, scan, names, read, skip=(key,))
        stems = [_stem(target)]
        if worded:
            mids = tuple(mid for mid, _scope, _digest in self.importers(key))
            stems.extend(_stem(pathlib.Path(mid)) for mid in mids)
            # The files one import further depend on the other files' texts and on who imports `path`, not on
            # `path`'s own text: an edit of the analysed buffer alone reuses the last answer (the scan reads every
            # worded file once per importer: about 3 ms a keystroke in timm).
            sig = (mids, tuple((other, id(text)) for other, text in worded if other != key))
            hit = self._further.get(key)
            if hit is not None and hit[0] == sig:
                names |= hit[1]
                read.update(hit[2])
            else:
                more: set = set()
                more_read: dict = {}
                for mid in mids:
                    self._off_names_into(pathlib.Path(mid), worded, scan, more, more_read,
                                         skip=(key, mid, *read))
                self._further[key] = (sig, frozenset(more), dict(more_read), worded)
                names |= more
                read.update(more_read)
        out = frozenset(names)
        self._callers[key] = (now, out, read, tuple(stems))
        return out, read

    def no_grad_strings(self, path: str, scan: Callable) -> tuple[frozenset, dict]:
        """The constant strings ("=sample") that the workspace's other files hand to calls where grad mode may be
        off (`scan`: `nograd_calls.called_without_grad`, which names them so), with the files that hand any (path ->
        digest). Asked only by a file that picks methods by a string (`getattr(self, '_' + mode)`), whose callers
        need not import it (a trainer handed the model). Every file with a grad-mode word is read once per version
        (`_off_calls`, shared with `no_grad_callers`)."""
        key = str(pathlib.Path(path).resolve())
        names: set = set()
        read: dict = {}
        for other, _text in self._worded_files():
            if other == key:
                continue
            scope = self.scope_for(pathlib.Path(other))
            digest = self.cached_digest(pathlib.Path(other))
            if scope is None or digest is None:
                continue
            info = self._off_info(other, scope, digest, scan)
            strings = {n for n in info[1] if n[:1] == "="}
            if strings:
                names |= strings
                read[other] = digest
        return frozenset(names), read

    def _worded_files(self) -> list:
        """The workspace's Python files whose text holds a grad-mode word, as (path, text) (memoised per text)."""
        out = []
        for other in self.python_files():
            text = self._text(pathlib.Path(other))
            if text is None:
                continue
            seen = self._words.get(other)
            if seen is None or seen[0] is not text:
                seen = self._words[other] = (text, any(w in text for w in _GRAD_OFF_WORDS))
            if seen[1]:
                out.append((other, text))
        return out

    def _off_names_into(self, target: pathlib.Path, worded: list, scan: Callable, names: set, read: dict,
                        skip: tuple) -> None:
        """Add to `names` what the files of `worded` (`_worded_files`) that import the module at `target` call where
        grad mode may be off (`scan`), and those files' digests to `read`; files in `skip` or already in `read` are
        not read again."""
        stem = _stem(target)
        # A line that imports something named like the module: `from model import Net`, `import pkg.model as m`,
        # `from . import model`, `from .model import *`.
        names_it = re.compile(rf"^[ \t]*(?:from[ \t]+[\w.]*\b{re.escape(stem)}\b|(?:from[ \t]+[\w.]+[ \t]+)?import[ \t(]"
                              rf"[^\n]*\b{re.escape(stem)}\b)", re.M)
        for other, text in worded:
            if other in skip or other in read or stem not in text:
                continue
            found = self._naming_scope(other, stem, text, names_it)
            if found is None:
                continue
            info = self._off_info(other, *found, scan)
            if not info[1] or not self._imports(info[2], other, target, stem):
                continue
            names |= info[1]
            read[other] = info[0]

    def _off_info(self, other: str, scope, digest: str, scan: Callable) -> tuple:
        """(digest, what `scan` finds the file `other` calling where grad mode may be off, its imports), kept per
        version in `_off_calls`."""
        info = self._off_calls.get(other)
        if info is None or info[0] != digest:
            info = self._off_calls[other] = (digest, frozenset(scan(scope)), tuple(sorted(set(scope.imports.values()))))
        return info

    def _naming_scope(self, other: str, stem: str, text: str, names_it) -> Optional[tuple]:
        """(scope, digest) of the file `other` when its text imports the module `stem` (`names_it`, memoised per
        text version), else None."""
        named = self._names_stem.get((other, stem))
        if named is None or named[0] is not text:
            named = self._names_stem[(other, stem)] = (text, names_it.search(text) is not None)
        if not named[1]:
            return None
        scope = self.scope_for(pathlib.Path(other))
        digest = self.cached_digest(pathlib.Path(other))
        if scope is None or digest is None:
            return None
        return scope, digest

    def importers(self, path: str) -> tuple:
        """The other workspace files that import the module at `path` (`reverse.py`'s callers): (path, scope,
        digest) each, in path order. Lazy like `no_grad_callers`: a file is parsed only if its text holds the module's
        name on a line that imports it; the per-file answers are kept per text version, the whole answer
        `LIST_TTL` seconds (files added since are not seen until then, like imports)."""
        try:
            target = pathlib.Path(path).resolve()
            target.relative_to(self.root)
        except (OSError, ValueError, RuntimeError):
            return ()
        key = str(target)
        now = time.monotonic()
        hit = self._importers.get(key)
        if hit is None or now - hit[0] >= LIST_TTL:
            hit = self._importers[key] = (now, self._importing(key, target))
        out = []
        for other in hit[1]:
            scope = self.scope_for(pathlib.Path(other))
            digest = self.cached_digest(pathlib.Path(other))
            if scope is not None and digest is not None:
                out.append((other, scope, digest))
        return tuple(out)

    def _importing(self, key: str, target: pathlib.Path) -> tuple:
        stem = _stem(target)
        names_it = re.compile(rf"^[ \t]*(?:from[ \t]+[\w.]*\b{re.escape(stem)}\b|(?:from[ \t]+[\w.]+[ \t]+)?import[ \t(]"
                              rf"[^\n]*\b{re.escape(stem)}\b)", re.M)
        out = []
        for other in self.python_files():
            if other == key:
                continue
            text = self._text(pathlib.Path(other))
            if text is None or stem not in text:
                continue
            found = self._naming_scope(other, stem, text, names_it)
            if found is None:
                continue
            scope, digest = found
            if not self._imports(tuple(sorted(set(scope.imports.values()))), other, target, stem):
                continue
            out.append(other)
        return tuple(out)

    def _imports(self, quals: tuple, origin: str, target: pathlib.Path, stem: str) -> bool:
        """Whether one of a file's imports (qualified names, `.`-prefixed when relative) names the module `target`
        (whose name is `stem`: only imports with that part are resolved)."""
        for qual in quals:
            level = len(qual) - len(qual.lstrip("."))
            bare = qual.lstrip(".")
            if stem not in bare.split("."):
                continue
            for module in (bare, bare.rpartition(".")[0]):
                if (module or level) and self.find(module, level, origin) == target:
                    return True
        return False

    def cached_digest(self, path: pathlib.Path) -> Optional[str]:
        """The digest of the text `scope_for` last parsed for `path` (call `scope_for` first)."""
        with self._lock:
            entry = self._cache.get(str(path))
        return entry[0] if entry else None

    @staticmethod
    def digest_of(path: str) -> Optional[str]:
        try:
            return hashlib.sha1(pathlib.Path(path).read_text(encoding="utf-8").encode("utf-8", "surrogatepass")).hexdigest()
        except (OSError, UnicodeDecodeError):
            return None

    def importers_of(self, path: str, candidates: dict[str, str]) -> list[str]:
        """Which of `candidates` (path -> text, e.g. open documents) import the module at `path`."""
        target = pathlib.Path(path).resolve()
        out = []
        for other, text in candidates.items():
            if str(pathlib.Path(other).resolve()) == str(target):
                continue
            try:
                tree = ast.parse(text)
            except SyntaxError as exc:
                tree = parse_rewritten(text, exc)
                if tree is None:
                    continue
            except (ValueError, RecursionError, MemoryError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    if self.find(node.module or "", node.level or 0, other) == target:
                        out.append(other)
                        break
                    if any(self.find(f"{node.module or ''}.{a.name}".strip("."), node.level or 0, other) == target
                           for a in node.names):
                        out.append(other)
                        break
                elif isinstance(node, ast.Import):
                    if any(self.find(a.name, 0, other) == target for a in node.names):
                        out.append(other)
                        break
        return out
