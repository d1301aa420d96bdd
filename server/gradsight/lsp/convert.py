"""Engine values -> LSP values: diagnostics, hovers, inlay hints and text edits.

Pure functions of (engine value, `View`, `LineIndex`); positions go through `positions.LineIndex`.
Engine lines are module lines; `View.offset` maps them onto the editor document (non-zero only for
notebook cells).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from lsprotocol import types
from pygls.uris import from_fs_path

from ..engine import StateFact
from ..findings import Applicability, Edit, Finding, Severity
from ..rules import get_rule
from .documents import Snapshot, View
from .positions import LineIndex

SOURCE = "gradsight"
TRACE_SUFFIX = " (confirmed by trace)"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}
_FIX_SAFETY = {
    Applicability.SAFE: "safe fix",
    Applicability.UNSAFE: "unsafe fix: may change behaviour",
    Applicability.DISPLAY_ONLY: "suggestion only, never applied automatically",
}
# Rule names that describe code with no effect; editors fade such code (DiagnosticTag.Unnecessary).
_UNNECESSARY_WORDS = ("dead", "unused", "no-effect", "useless", "redundant")


def is_trace(finding: Finding) -> bool:
    return finding.extra.get("source") == "trace"


def diagnostic(finding: Finding, view: View, index: LineIndex, snapshot: Snapshot,
               resolve_text: Callable[[str], str | None] | None = None) -> types.Diagnostic:
    """One finding as a diagnostic on `view`. `resolve_text(path)` gives other open files' text."""
    rule = get_rule(finding.code)
    message = finding.message + (TRACE_SUFFIX if is_trace(finding) else "")
    tags = None
    if finding.severity == Severity.HINT and any(w in finding.name for w in _UNNECESSARY_WORDS):
        tags = [types.DiagnosticTag.Unnecessary]
    related = [_related(r.path, r.line, r.column, r.message, view, index, snapshot, resolve_text)
               for r in finding.related]
    return types.Diagnostic(
        range=index.range_to_lsp(finding.line - view.offset, finding.column,
                                 finding.end_line - view.offset, finding.end_column),
        message=message,
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=rule.docs_url()) if rule else None,
        source=SOURCE,
        related_information=related or None,
        tags=tags,
        data=diagnostic_data(finding, view.version),
    )


def diagnostic_data(finding: Finding, version: int) -> dict[str, Any]:
    """What a code action needs later: the fix, where the finding came from, and the version."""
    return {
        "fix": finding.fix.to_json() if finding.fix else None,
        "source": "trace" if is_trace(finding) else "static",
        "code": finding.code,
        "line": finding.line,
        "version": version,
    }


def _related(path: str, line: int, column: int, message: str, view: View, index: LineIndex, snapshot: Snapshot,
             resolve_text: Callable[[str], str | None] | None) -> types.DiagnosticRelatedInformation:
    if path == snapshot.path:
        target = view if view.owns(line) else _owner(snapshot, line) or view
        target_index = index if target is view else LineIndex(target.text, index.encoding)
        point = target_index.to_lsp(line - target.offset, column)
        uri = target.uri
    else:
        text = resolve_text(path) if resolve_text else None
        uri = path if "://" in path or path.startswith("untitled:") else from_fs_path(path) or path
        if text is not None:
            point = LineIndex(text, index.encoding).to_lsp(line, column)
        else:  # an unopened file: the code-point column is right for ASCII lines, close otherwise
            point = types.Position(line=max(line - 1, 0), character=max(column - 1, 0))
    return types.DiagnosticRelatedInformation(
        location=types.Location(uri=uri, range=types.Range(start=point, end=point)), message=message)


def _owner(snapshot: Snapshot, line: int) -> View | None:
    for view in snapshot.views:
        if view.owns(line):
            return view
    return None


def confirms(traced: Finding, static: Finding) -> bool:
    """Whether a trace finding confirms a static one: same line, and the same rule (the tracer
    reports `GS9xx <static-name>-confirmed` for what a static rule predicted, or the same code)."""
    if traced.line != static.line or traced.path != static.path:
        return False
    return traced.code == static.code or traced.name == f"{static.name}-confirmed"


def merge_trace(static: Sequence[Finding], traced: Sequence[Finding]) -> list[Finding]:
    """Static findings plus the trace's. A static finding the trace confirms keeps its code, range and
    fix and is marked as traced; a trace finding that confirms nothing static is added as it is."""
    out = list(static)
    for t in traced:
        for i, s in enumerate(out):
            if confirms(t, s) and not is_trace(s):
                out[i] = Finding(s.path, s.line, s.column, s.end_line, s.end_column, s.code, s.name, s.severity,
                                 s.message, s.related, s.fix or t.fix, {**s.extra, "source": "trace"})
                break
        else:
            out.append(t)
    return out


# -- edits -----------------------------------------------------------------------------------------


def text_edits(edits: Sequence[Edit], view: View, index: LineIndex) -> list[types.TextEdit]:
    return [
        types.TextEdit(range=index.range_to_lsp(e.line - view.offset, e.column, e.end_line - view.offset, e.end_column),
                       new_text=e.new_text)
        for e in edits
    ]


def workspace_edit(uri: str, version: int | None, edits: list[types.TextEdit],
                   document_changes: bool) -> types.WorkspaceEdit:
    """A workspace edit, versioned where the client supports `documentChanges`."""
    if document_changes:
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=edits)])
    return types.WorkspaceEdit(changes={uri: edits})


# -- hover -----------------------------------------------------------------------------------------


def fact_markdown(fact: StateFact, snapshot: Snapshot, markdown: bool = True) -> str:
    """The summary, then the chain of facts that led here with line links."""
    lines = [f"**{fact.summary}**" if markdown else fact.summary]
    if fact.chain:
        lines.append("")
        for line, text in fact.chain:
            lines.append(f"- {line_link(line, snapshot, markdown)}: {text}")
    return "\n".join(lines)


def line_link(line: int, snapshot: Snapshot, markdown: bool = True) -> str:
    """`[line 12](uri#L12)`; for notebooks the cell's uri and the line inside the cell."""
    uri, local = snapshot.key, line
    owner = _owner(snapshot, line)
    if owner is not None and snapshot.cells is not None:
        uri, local = owner.uri, line - owner.offset
    label = f"line {local}"
    return f"[{label}]({uri}#L{local})" if markdown else label


def finding_markdown(finding: Finding, markdown: bool = True) -> str:
    rule = get_rule(finding.code)
    title = f"{finding.code} `{finding.name}`" if markdown else f"{finding.code} {finding.name}"
    if rule is not None and markdown:
        title = f"[{finding.code}]({rule.docs_url()}) `{finding.name}`"
    parts = [f"**{title}**" if markdown else title]
    if rule is not None:
        parts.append(rule.summary)
    parts.append(finding.message + (TRACE_SUFFIX if is_trace(finding) else ""))
    if finding.fix is not None:
        parts.append(f"Fix: {finding.fix.title} ({_FIX_SAFETY.get(finding.fix.applicability, '')})")
    return "\n\n".join(parts)


def hover(facts: Sequence[StateFact], findings: Sequence[Finding], snapshot: Snapshot, view: View,
          index: LineIndex, markdown: bool = True) -> types.Hover | None:
    """The innermost fact under the cursor, and the findings there; None when there is neither."""
    if not facts and not findings:
        return None
    sections: list[str] = []
    anchor = None
    if facts:
        fact = facts[0]
        sections.append(fact_markdown(fact, snapshot, markdown))
        anchor = index.range_to_lsp(fact.line - view.offset, fact.column, fact.end_line - view.offset, fact.end_column)
    for finding in findings:
        sections.append(finding_markdown(finding, markdown))
    if anchor is None:
        f = findings[0]
        anchor = index.range_to_lsp(f.line - view.offset, f.column, f.end_line - view.offset, f.end_column)
    separator = "\n\n---\n\n" if markdown else "\n\n"
    kind = types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText
    return types.Hover(contents=types.MarkupContent(kind=kind, value=separator.join(sections)), range=anchor)


# -- inlay hints -----------------------------------------------------------------------------------


def inlay_hint(fact: StateFact, view: View, index: LineIndex, data: Any) -> types.InlayHint:
    return types.InlayHint(
        position=index.to_lsp(fact.end_line - view.offset, fact.end_column),
        label=fact.label,
        kind=types.InlayHintKind.Type,
        padding_left=True,
        data=data,
    )


def inlay_tooltip(fact: StateFact, snapshot: Snapshot, markdown: bool = True) -> types.MarkupContent | str:
    text = fact_markdown(fact, snapshot, markdown)
    return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text) if markdown else text
