"""Notebooks: the python cells of a notebook, in order, analysed as one module.

`join_cells` builds the module text and a `CellMap`; the map turns a line of that module back into
(cell uri, line inside the cell), and a cell line into a module line. Columns are unchanged, because
every cell line appears in the module verbatim, except IPython-only lines (`%magic`, `!shell`,
`?help`), which are commented out so the module still parses; nothing on such a line is reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .positions import LineIndex

_IPYTHON_ONLY = re.compile(r"^\s*(%%?[A-Za-z]|![A-Za-z./~$]|\?)|^\s*\w[\w.]*\?\??\s*$")


@dataclass(frozen=True)
class CellSpan:
    uri: str
    version: int
    first_line: int  # 1-based line of the cell's first line in the joined module
    line_count: int

    def contains(self, line: int) -> bool:
        return self.first_line <= line < self.first_line + self.line_count


@dataclass(frozen=True)
class CellMap:
    cells: tuple[CellSpan, ...]

    def cell_of(self, line: int) -> CellSpan | None:
        for cell in self.cells:
            if cell.contains(line):
                return cell
        return None

    def span(self, uri: str) -> CellSpan | None:
        for cell in self.cells:
            if cell.uri == uri:
                return cell
        return None

    def to_cell(self, line: int) -> tuple[str, int] | None:
        """Module line -> (cell uri, 1-based line in the cell)."""
        cell = self.cell_of(line)
        if cell is None:
            return None
        return cell.uri, line - cell.first_line + 1

    def to_module(self, uri: str, line: int) -> int | None:
        """Cell line (1-based) -> module line."""
        cell = self.span(uri)
        if cell is None:
            return None
        return cell.first_line + line - 1


def join_cells(cells: list[tuple[str, int, str]]) -> tuple[str, CellMap]:
    """Join (uri, version, text) cells into one module. Each cell starts on a fresh line."""
    parts: list[str] = []
    spans: list[CellSpan] = []
    line = 1
    for uri, version, text in cells:
        index = LineIndex(text)
        count = index.line_count
        lines = [_neutralise(index.line_text(i)) for i in range(count)]
        parts.append("\n".join(lines) + "\n")
        spans.append(CellSpan(uri=uri, version=version, first_line=line, line_count=count))
        line += count
    return "".join(parts), CellMap(tuple(spans))


def _neutralise(line: str) -> str:
    """Comment out IPython-only syntax, keeping the line (and so every later line number)."""
    if _IPYTHON_ONLY.match(line):
        return "#" + line
    return line
