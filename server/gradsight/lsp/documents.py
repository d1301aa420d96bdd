"""What the engine analyses (a `Snapshot`) and which editor documents show it (`View`s).

A plain file is one snapshot with one view. A notebook is one snapshot (its python cells joined,
see `notebooks.py`) with one view per cell; engine lines are module lines and `View.offset` turns
them into cell lines. Snapshots are immutable copies taken on the event loop, so a worker thread
can analyse one while the editor keeps typing.

The reverse-import map (`ImportGraph`) remembers, for every open document, which module names it
imports (read from `ast` import statements), so that a change to `pkg/utils.py` re-analyses the
open documents that import `pkg.utils` (or `utils`, from a sibling).
"""

from __future__ import annotations

import ast
import pathlib
from dataclasses import dataclass, field
from typing import Any, Iterable
from urllib.parse import unquote

import logging
import re
import sys

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument, Workspace

from .notebooks import CellMap, join_cells
from .positions import code_points_before, normalize_encoding

log = logging.getLogger(__name__)

_LINE_SPLIT = re.compile(r"(\r\n|\r|\n)")


# -- the editor's documents -------------------------------------------------------------------------


class LspTextDocument(TextDocument):
    """pygls's TextDocument with the LSP's idea of lines and of out-of-range positions.

    pygls splits lines with `str.splitlines()`, so a form feed, `\v`, `\x1c`-`\x1e`, `\x85`, U+2028 or
    U+2029 ends a line for it but not for the editor, and every later edit lands on the wrong line. It
    also clamps a character past a line's end to one before the end on the last line, and to after the
    line break (between `\r` and `\n` in CRLF files) elsewhere. Here, as the specification says:

    - lines end at `\n`, `\r\n` and `\r` only;
    - a character past the end of its line means the end of that line (before its line break);
    - a line past the end of the document means the end of the document;
    - columns are counted in the negotiated position encoding (UTF-16 by default); a column inside a
      surrogate pair (or a UTF-8 sequence) means the start of that character, as in `positions.LineIndex`;
    - a range whose end comes before its start is read as the range between the two positions.
    """

    def __init__(self, *args, encoding: object = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.encoding = normalize_encoding(encoding)

    @property
    def lines(self) -> tuple[str, ...]:
        """The lines with their line breaks; a text ending in a line break has an empty last line."""
        parts = _LINE_SPLIT.split(self.source)
        return tuple(parts[i] + (parts[i + 1] if i + 1 < len(parts) else "") for i in range(0, len(parts), 2))

    def offset_of(self, position: types.Position, parts: list[str] | None = None) -> int:
        """Code-point offset into `source` of an LSP position, clamped the way the specification says."""
        text = self.source
        if parts is None:
            parts = _LINE_SPLIT.split(text)
        line = max(position.line, 0)
        if 2 * line >= len(parts):
            return len(text)
        start = sum(map(len, parts[: 2 * line]))
        return start + code_points_before(parts[2 * line], position.character, self.encoding)

    def offset_at_position(self, client_position: types.Position) -> int:
        return self.offset_of(client_position)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        text = self.source
        parts = _LINE_SPLIT.split(text)
        a = self.offset_of(change.range.start, parts)
        b = self.offset_of(change.range.end, parts)
        if b < a:
            a, b = b, a
        self._source = text[:a] + change.text + text[b:]


class LspWorkspace(Workspace):
    """pygls's Workspace holding `LspTextDocument`s, and forgiving about documents that are not open.

    pygls raises KeyError for a `didChange` of a document (or a notebook) that was never opened, which it
    then shows the user as an error pop-up; here it is a line in the log, and the change is ignored.
    """

    @classmethod
    def replacing(cls, other: Workspace, sync_kind: types.TextDocumentSyncKind) -> "LspWorkspace":
        return cls(other.root_uri, sync_kind, list(other.folders.values()), other.position_encoding)

    def _create_text_document(self, doc_uri: str, source: str | None = None, version: int | None = None,
                              language_id: str | None = None) -> TextDocument:
        return LspTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                               sync_kind=self._sync_kind, position_codec=self.position_codec,
                               encoding=self.position_encoding)

    def update_text_document(self, text_doc: types.VersionedTextDocumentIdentifier,
                             change: types.TextDocumentContentChangeEvent) -> None:
        if unquote(text_doc.uri) not in self.text_documents:
            log.warning("ignored a change to %s, which is not open", text_doc.uri)
            return
        super().update_text_document(text_doc, change)

    def remove_text_document(self, doc_uri: str) -> None:
        if unquote(doc_uri) not in self.text_documents:
            log.info("ignored closing %s, which is not open", doc_uri)
        super().remove_text_document(doc_uri)

    def update_notebook_document(self, params: types.DidChangeNotebookDocumentParams) -> None:
        if self.get_notebook_document(notebook_uri=params.notebook_document.uri) is None:
            log.warning("ignored a change to notebook %s, which is not open", params.notebook_document.uri)
            return
        super().update_notebook_document(params)


@dataclass(frozen=True)
class View:
    """One editor document's share of a snapshot."""

    uri: str
    version: int
    text: str
    offset: int = 0  # engine line = view line + offset
    line_count: int | None = None  # lines of the module that belong to this view (None: all)

    def owns(self, module_line: int) -> bool:
        line = module_line - self.offset
        return line >= 1 and (self.line_count is None or line <= self.line_count)


@dataclass(frozen=True)
class Snapshot:
    key: str  # the text document's uri, or the notebook's
    path: str  # a file system path when the uri is a file uri, else the uri itself
    text: str
    version: int
    cells: CellMap | None = None
    views: tuple[View, ...] = ()

    def view(self, uri: str) -> View | None:
        uri = unquote(uri)
        for view in self.views:
            if unquote(view.uri) == uri:
                return view
        return None


def uri_to_path(uri: str) -> str:
    if uri.startswith("file:"):
        try:
            return to_fs_path(uri) or uri
        except Exception:  # noqa: BLE001 - a malformed uri is not worth a crash
            return uri
    return uri


def notebook_of(workspace: Workspace, uri: str) -> types.NotebookDocument | None:
    return workspace.get_notebook_document(notebook_uri=uri) or workspace.get_notebook_document(cell_uri=uri)


def snapshot_of(workspace: Workspace, uri: str) -> Snapshot | None:
    """The current snapshot holding `uri` (a file, a notebook or one of its cells); None if not open."""
    notebook = notebook_of(workspace, uri)
    if notebook is not None:
        return _notebook_snapshot(workspace, notebook)
    doc = workspace.text_documents.get(unquote(uri))
    if doc is None or not _is_python(doc.uri, doc.language_id):
        return None
    version = doc.version or 0
    text = doc.source
    return Snapshot(key=doc.uri, path=uri_to_path(doc.uri), text=text, version=version,
                    views=(View(uri=doc.uri, version=version, text=text),))


def _is_python(uri: str, language_id: str | None) -> bool:
    """Python documents only: the client may send others (a server configured for every file type)."""
    return language_id in (None, "", "python") or unquote(uri).endswith((".py", ".pyi"))


def _notebook_snapshot(workspace: Workspace, notebook: types.NotebookDocument) -> Snapshot:
    cells: list[tuple[str, int, str]] = []
    for cell in notebook.cells:
        if cell.kind != types.NotebookCellKind.Code:
            continue
        doc = workspace.text_documents.get(unquote(cell.document))
        if doc is None or (doc.language_id or "python") != "python":
            continue
        cells.append((doc.uri, doc.version or 0, doc.source))
    text, cell_map = join_cells(cells)
    views = tuple(
        View(uri=span.uri, version=span.version, text=source, offset=span.first_line - 1, line_count=span.line_count)
        for span, (_, _, source) in zip(cell_map.cells, cells, strict=True)
    )
    return Snapshot(key=notebook.uri, path=uri_to_path(notebook.uri), text=text, version=notebook.version,
                    cells=cell_map, views=views)


# -- the reverse-import map ------------------------------------------------------------------------


def module_names(path: str, roots: Iterable[str]) -> frozenset[str]:
    """Names other files may import this one by: dotted paths below each root, and the bare stem."""
    p = pathlib.PurePath(path)
    if p.suffix not in (".py", ".pyi", ".ipynb"):
        return frozenset()
    parts = list(p.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    names = {parts[-1]} if parts else set()
    for root in roots:
        try:
            rel = p.with_suffix("").relative_to(root)
        except ValueError:
            continue
        rel_parts = [x for x in rel.parts if x != "__init__"]
        for start in range(len(rel_parts)):  # "src/pkg/mod.py" is imported as "pkg.mod"
            names.add(".".join(rel_parts[start:]))
    return frozenset(n for n in names if n)


def imported_modules(text: str, own_package: str | None = None, records=None) -> frozenset[str]:
    """Module names a source imports (every dotted prefix; relative imports resolved when possible).

    `records` are the engine's `Analysis.imports` (the import statements it already parsed); given them,
    the text is not parsed a second time on every keystroke.
    """
    if records is not None:
        nodes = [ast.Import(names=[ast.alias(name=n) for n in names]) if kind == "import" else
                 ast.ImportFrom(module=module or None, names=[ast.alias(name=n) for n in names], level=level)
                 for kind, module, level, names in records]
    else:
        try:
            nodes = list(ast.walk(ast.parse(text)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return frozenset()
    found: set[str] = set()

    def add(name: str) -> None:
        bits = name.split(".")
        for i in range(1, len(bits) + 1):
            found.add(".".join(bits[:i]))

    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                # Sibling imports (`from . import utils`, `from .utils import f`) match by bare name.
                for alias in node.names:
                    found.add(alias.name)
                if base:
                    found.add(base.split(".")[0])
                    found.add(base)
                if own_package is not None:
                    pkg = own_package.split(".")
                    anchor = pkg[: len(pkg) - (node.level - 1)] if node.level - 1 <= len(pkg) else []
                    base = ".".join([*anchor, base] if base else anchor)
                else:
                    continue
            if base:
                add(base)
                for alias in node.names:
                    found.add(f"{base}.{alias.name}")
    # Interned: every open document keeps its set, and most of them import the same few dozen modules.
    return frozenset(map(sys.intern, found))


@dataclass
class ImportGraph:
    """Open document key -> (names it is known by, names it imports)."""

    names: dict[str, frozenset[str]] = field(default_factory=dict)
    imports: dict[str, frozenset[str]] = field(default_factory=dict)

    def update(self, key: str, names: frozenset[str], imports: frozenset[str]) -> None:
        self.names[key] = names
        self.imports[key] = imports

    def forget(self, key: str) -> None:
        self.names.pop(key, None)
        self.imports.pop(key, None)

    def dependents(self, key: str) -> list[str]:
        """Open documents that import `key`'s module."""
        names = self.names.get(key, frozenset())
        if not names:
            return []
        return sorted(other for other, imported in self.imports.items() if other != key and names & imported)


# -- the engine's view of the workspace -------------------------------------------------------------


class EngineWorkspaces:
    """The engine's `Workspace` objects (cross-file resolution), one per root, fed with open buffers.

    The engine reads imported files through a `gradsight.engine.workspace.Workspace`; an open
    document's unsaved text is given to it as an overlay, so a call into `utils.py` is analysed as the
    user sees `utils.py`, saved or not. A file's root is the workspace folder holding it, else the
    folder of its nearest pyproject.toml, else its own folder.
    """

    def __init__(self) -> None:
        self._by_root: dict[str, Any] = {}
        self._overlays: dict[str, str] = {}

    def for_path(self, path: str, roots: Iterable[str]) -> Any | None:
        if "://" in path or not pathlib.PurePath(path).is_absolute():
            return None
        try:
            from ..engine.workspace import Workspace
        except ImportError:  # an engine without cross-file resolution
            return None
        root = self._root_of(path, roots)
        ws = self._by_root.get(root)
        if ws is None:
            ws = self._by_root[root] = Workspace(root)
            for overlay_path, text in self._overlays.items():
                ws.set_overlay(overlay_path, text)
        return ws

    def set_text(self, path: str, text: str | None) -> None:
        """Record (or, with None, drop) an open buffer's text for every root."""
        if "://" in path or not pathlib.PurePath(path).is_absolute() or not path.endswith((".py", ".pyi")):
            return
        if text is None:
            self._overlays.pop(path, None)
        else:
            self._overlays[path] = text
        for ws in self._by_root.values():
            ws.set_overlay(path, text)

    @staticmethod
    def _root_of(path: str, roots: Iterable[str]) -> str:
        p = pathlib.PurePath(path)
        inside = [r for r in roots if p.is_relative_to(r)]
        if inside:
            return max(inside, key=len)
        from ..config import find_pyproject

        try:
            pyproject = find_pyproject(pathlib.Path(path))
        except OSError:
            pyproject = None
        return str(pyproject.parent if pyproject else p.parent)


def resolved(path: str) -> str:
    """The resolved form of a file path (how the engine names dependencies)."""
    if "://" in path:
        return path
    try:
        return str(pathlib.Path(path).resolve())
    except (OSError, RuntimeError):
        return path
