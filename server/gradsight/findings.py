"""The data every front end (CLI, language server, trace) speaks: findings, fixes and edits.

Positions here are 1-based lines and 1-based *code-point* columns, as in the CLI's JSON contract.
Only `gradsight.lsp.positions` converts them to LSP's 0-based UTF-16 positions.

The JSON shape produced by `Finding.to_json()` is a fixed contract (other tools parse it):
`path, line, column, end_line, end_column, code, name, severity, message, related, fix`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"
    HINT = "hint"

    @property
    def rank(self) -> int:
        return {"hint": 0, "information": 1, "warning": 2, "error": 3}[self.value]


class Applicability(str, enum.Enum):
    """How far a fix can be trusted (ruff's model)."""

    SAFE = "safe"  # keeps the exact meaning; applied by --fix and "fix all"
    UNSAFE = "unsafe"  # may change behaviour; the rule's "Fix safety" section says how
    DISPLAY_ONLY = "display-only"  # shown, never applied automatically


@dataclass(frozen=True)
class Edit:
    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "new_text": self.new_text,
        }


@dataclass(frozen=True)
class Fix:
    title: str
    applicability: Applicability
    edits: tuple[Edit, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "applicability": self.applicability.value,
            "edits": [e.to_json() for e in self.edits],
        }


@dataclass(frozen=True)
class Related:
    """A place that explains a finding: the `.detach()`, the op that saved a tensor, the first backward."""

    path: str
    line: int
    column: int
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "column": self.column, "message": self.message}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    severity: Severity
    message: str
    related: tuple[Related, ...] = ()
    fix: Fix | None = None
    # Extra, non-contract data (e.g. "source": "trace" for findings confirmed by a run).
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            "related": [r.to_json() for r in self.related],
            "fix": self.fix.to_json() if self.fix else None,
        }
        out.update(self.extra)
        return out

    @staticmethod
    def from_json(data: dict[str, Any]) -> "Finding":
        fix = data.get("fix")
        known = {"path", "line", "column", "end_line", "end_column", "code", "name", "severity",
                 "message", "related", "fix"}
        return Finding(
            path=data["path"],
            line=data["line"],
            column=data["column"],
            end_line=data["end_line"],
            end_column=data["end_column"],
            code=data["code"],
            name=data["name"],
            severity=Severity(data["severity"]),
            message=data["message"],
            related=tuple(Related(**r) for r in data.get("related", [])),
            fix=None if not fix else Fix(
                title=fix["title"],
                applicability=Applicability(fix["applicability"]),
                edits=tuple(Edit(**e) for e in fix["edits"]),
            ),
            extra={k: v for k, v in data.items() if k not in known},
        )


def sort_key(f: Finding) -> tuple:
    return (f.path, f.line, f.column, f.code)


# A finding that only restates what another rule says, with its evidence, on the same line: the pair (restating
# code, the code whose finding makes it redundant). GS413 reasons from a module class alone and GS415 from a
# training function whose model is a parameter; when an analysis followed the state through a real carry,
# GS402 stands on the same statement with the backward that frees the graph and the call that reuses it. An
# in-place write on one of several views returned together (GS303) raises at the write itself, before the backward
# that GS301 says would fail (allennlp's CopyNet `scatter_` on a `split` output).
# GS426 (a loss attribute added into and never reset, read from the class's code alone) gives way to GS420 on the
# same statement, which saw the graph written into the attribute.
RESTATED_BY = {"GS413": "GS402", "GS415": "GS402", "GS416": "GS402", "GS301": "GS303", "GS426": "GS420"}
# GS109 (a `no_grad` block around a call that differentiates, read from the syntax) gives way to a GS401 finding that
# names its line in a related note: the interpreter ran the callee under that block and reports the same failure.
RESTATED_AT = {"GS109": "GS401"}


def drop_restated(findings: list) -> list:
    """`findings` (of one file) without those another finding restates (`RESTATED_BY`): one on the same line, or
    on a line of this file the finding names in its related notes (GS416's "raises here")."""
    present = {(f.line, f.code) for f in findings}
    noted = {(r.line, f.code) for f in findings if f.code in RESTATED_AT.values() for r in f.related
             if r.path == f.path}

    def restated(f) -> bool:
        at = RESTATED_AT.get(f.code)
        if at is not None and (f.line, at) in noted:
            return True
        by = RESTATED_BY.get(f.code)
        if by is None:
            return False
        lines = {f.line} | {r.line for r in f.related if r.path == f.path}
        return any((line, by) in present for line in lines)

    return [f for f in findings if not restated(f)]
