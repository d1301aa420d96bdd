"""Engine values -> LSP values: diagnostics, hovers, inlay hints and text edits.

Pure functions of (engine value, `View`, `LineIndex`); positions go through `positions.LineIndex`.
Engine lines are module lines; `View.offset` maps them onto the editor document (non-zero only for
notebook cells).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Sequence

from lsprotocol import types
from pygls.uris import from_fs_path

if TYPE_CHECKING:
    from ..engine import StateFact
from ..findings import Applicability, Edit, Finding, Severity
from ..rules import get_rule
from .documents import Snapshot, View
from .positions import LineIndex

SOURCE = "gradsight"
TRACE_SUFFIX = " (confirmed by trace)"  # a static finding the trace confirmed
FOUND_SUFFIX = " (found by trace)"  # a trace finding no static rule predicted

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


def trace_suffix(finding: Finding) -> str:
    """What a message ends with: confirmed static findings and trace-only ones read differently."""
    if not is_trace(finding):
        return ""
    return TRACE_SUFFIX if finding.extra.get("confirmed") else FOUND_SUFFIX


def diagnostic(finding: Finding, view: View, index: LineIndex, snapshot: Snapshot,
               resolve_text: Callable[[str], str | None] | None = None) -> types.Diagnostic:
    """One finding as a diagnostic on `view`. `resolve_text(path)` gives other open files' text."""
    rule = get_rule(finding.code)
    message = finding.message + trace_suffix(finding)
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
        "confirmed": bool(finding.extra.get("confirmed")),  # a static finding the trace confirmed
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
    confirms_codes = traced.extra.get("confirms") or ()
    return (traced.code == static.code or traced.name == f"{static.name}-confirmed"
            or static.code in confirms_codes)


def merge_trace(static: Sequence[Finding], traced: Sequence[Finding]) -> list[Finding]:
    """Static findings plus the trace's. A static finding the trace confirms keeps its code, range and
    fix and is marked as traced; a trace finding that confirms nothing static is added as it is."""
    out = list(static)
    for t in traced:
        for i, s in enumerate(out):
            if confirms(t, s) and not is_trace(s):
                out[i] = Finding(s.path, s.line, s.column, s.end_line, s.end_column, s.code, s.name, s.severity,
                                 s.message, s.related, s.fix or t.fix,
                                 {**s.extra, "source": "trace", "confirmed": True, "trace_message": t.message})
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

# Engine summaries cite lines as "(line 12)" or "at line 12" without naming the file; the hover lists
# the chain with file-correct links instead, so those bare references are dropped from the headline.
_LINE_REF = re.compile(r"\s*\((?:from )?line \d+\)|\s+at line \d+")
_CODE = re.compile(r"`([^`]+)`")


class Locator:
    """Finds which file a chain entry's line belongs to.

    The engine's chain entries are `(line, text)` pairs, and a value that comes from an imported module
    (`out = model(x)` with `forward` in models.py) has entries whose lines are models.py's. An entry
    whose code (the backticked part of its text) is on that line of the hovered file belongs to it;
    otherwise the files the analysis read (`Analysis.dependencies`) are searched. A 3-tuple
    `(line, text, path)` is taken at its word, for an engine that records the path itself.
    """

    def __init__(self, snapshot: Snapshot, dependencies: Sequence[str] = (),
                 resolve_text: Callable[[str], str | None] | None = None) -> None:
        self.snapshot = snapshot
        self.dependencies = [d for d in dependencies if d != snapshot.path]
        self.resolve_text = resolve_text
        self._lines: dict[str, list[str] | None] = {snapshot.path: snapshot.text.splitlines()}

    def lines_of(self, path: str) -> list[str] | None:
        if path not in self._lines:
            text = self.resolve_text(path) if self.resolve_text else None
            if text is None:
                try:
                    with open(path, encoding="utf-8") as fh:
                        text = fh.read()
                except (OSError, UnicodeDecodeError, ValueError):
                    text = None
            self._lines[path] = None if text is None else text.splitlines()
        return self._lines[path]

    def _has(self, path: str, line: int, code: str) -> bool:
        lines = self.lines_of(path)
        return lines is not None and 0 < line <= len(lines) and code in lines[line - 1]

    def path_of(self, entry: Sequence[Any]) -> str:
        if len(entry) > 2 and isinstance(entry[2], str) and entry[2]:
            return entry[2]
        line, text = entry[0], entry[1]
        codes = [c.removesuffix("...") for c in _CODE.findall(text)]
        codes = [c for c in codes if c.strip()]
        if not codes or any(self._has(self.snapshot.path, line, c) for c in codes):
            return self.snapshot.path
        for path in self.dependencies:
            if any(self._has(path, line, c) for c in codes):
                return path
        return self.snapshot.path


def _plain(text: str) -> str:
    """Markdown-free text for clients that show hovers as plain text: no backticks, no emphasis."""
    return text.replace("`", "")


def place_link(path: str, line: int, snapshot: Snapshot, markdown: bool = True, links: bool = True) -> str:
    """`line 12` in the hovered file, `models.py line 31` in another, linked to that file's line
    (`links=False`: the words only, for clients that render markdown but show links raw)."""
    if path == snapshot.path:
        return line_link(line, snapshot, markdown and links)
    uri = path if "://" in path or path.startswith("untitled:") else from_fs_path(path) or path
    label = f"{_basename(path)} line {line}"
    return f"[{label}]({uri}#L{line})" if markdown and links else label


def _basename(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def state_text(fact: StateFact) -> str:
    """The value's state in plain words, without bare line references (the chain gives them with files).

    Backward frees a graph's *saved tensors*, not the graph: the nodes stay referenced for as long as an
    output is. Saying "graph freed" next to "every step's graph stays in memory" (GS404) reads as a
    contradiction, so the freed state is told as what it means for the user: a second backward raises.
    """
    summary = fact.summary
    if "graph already freed by backward" in summary:
        maybe = summary.startswith("maybe ")
        return (("backward may already have run through this graph" if maybe
                 else "backward already ran through this graph")
                + ": its saved tensors are released, so a second backward through it raises "
                  "(unless the first used retain_graph=True)")
    if summary.startswith("requires grad"):
        parts = [p.strip() for p in summary.split(" · ")]
        words = ["requires grad"]
        if "parameter" in parts:
            words.append("a parameter")
        elif "leaf" in parts:
            words.append("a leaf tensor (its .grad is filled by backward)")
        elif "non-leaf" in parts:
            words.append("computed from tensors that require grad")
        if any(p.startswith("saved for backward") for p in parts):
            words.append("saved for backward")
        return "; ".join(words)
    if summary.startswith("no gradient:"):
        return _LINE_REF.sub("", summary.split("; cause:")[0]).replace("no gradient:", "no gradient:", 1)
    return _LINE_REF.sub("", summary)


def fact_markdown(fact: StateFact, snapshot: Snapshot, markdown: bool = True,
                  locator: Locator | None = None, links: bool = True) -> str:
    """The value's state, then the chain of facts that led here, each with a link to its file and line."""
    locator = locator or Locator(snapshot)
    name = f"`{fact.name}`" if markdown else fact.name
    state = state_text(fact)
    lines = [f"**{name}**: {state}" if markdown else f"{name}: {_plain(state)}"]
    if fact.chain:
        lines.append("")
        for entry in fact.chain:
            place = place_link(locator.path_of(entry), entry[0], snapshot, markdown, links)
            text = entry[1] if markdown else _plain(entry[1])
            lines.append(f"- {place}: {text}")
    return "\n".join(lines)


def line_link(line: int, snapshot: Snapshot, markdown: bool = True) -> str:
    """`[line 12](uri#L12)`; for notebooks the cell's uri and the line inside the cell."""
    uri, local = snapshot.key, line
    owner = _owner(snapshot, line)
    if owner is not None and snapshot.cells is not None:
        uri, local = owner.uri, line - owner.offset
    label = f"line {local}"
    return f"[{label}]({uri}#L{local})" if markdown else label


def finding_markdown(finding: Finding, markdown: bool = True, snapshot: Snapshot | None = None,
                     links: bool = True, message: bool = True) -> str:
    """One finding, once: code and name (linked to the rule page), the message, where it comes from
    (related locations in their own files) and the fix. The rule's one-line summary is left out: it
    restates the message. `message=False` for editors that already show the diagnostic's message in
    the same hover (VS Code), so that it is not shown twice."""
    rule = get_rule(finding.code)
    severity = finding.severity.value if hasattr(finding.severity, "value") else str(finding.severity)
    if markdown:
        code = f"[{finding.code}]({rule.docs_url()})" if rule is not None and links else finding.code
        title = f"**{code} `{finding.name}`** ({severity})"
    else:
        title = f"{finding.code} {finding.name} ({severity})"
    parts = [title]
    if message:
        text = finding.message + trace_suffix(finding)
        parts.append(text if markdown else _plain(text))
    trace_message = finding.extra.get("trace_message")
    if isinstance(trace_message, str) and trace_message:
        trace_text = f"The trace: {trace_message}"
        parts.append(trace_text if markdown else _plain(trace_text))
    if finding.related and snapshot is not None:
        lines = []
        for r in finding.related:
            place = place_link(r.path, r.line, snapshot, markdown, links)
            lines.append(f"- {place}: {r.message if markdown else _plain(r.message)}")
        parts.append("\n".join(lines))
    if finding.fix is not None:
        fix = f"Fix: {finding.fix.title} ({_FIX_SAFETY.get(finding.fix.applicability, '')})"
        parts.append(fix if markdown else _plain(fix))
    return "\n\n".join(parts)


def _same_finding(a: Finding, b: Finding) -> bool:
    return (a.code, a.line, a.column, a.end_line, a.end_column) == (b.code, b.line, b.column, b.end_line, b.end_column)


def hover(facts: Sequence[StateFact], findings: Sequence[Finding], snapshot: Snapshot, view: View,
          index: LineIndex, markdown: bool = True, locator: Locator | None = None,
          links: bool = True, messages: bool = True) -> types.Hover | None:
    """The findings under the cursor (each once), then the innermost value's state and its cause chain;
    None when there is neither."""
    if not facts and not findings:
        return None
    unique: list[Finding] = []
    for finding in findings:
        if not any(_same_finding(finding, u) for u in unique):
            unique.append(finding)
    sections = [finding_markdown(f, markdown, snapshot, links, messages) for f in unique]
    anchor = None
    if facts:
        fact = facts[0]
        sections.append(fact_markdown(fact, snapshot, markdown, locator, links))
        anchor = index.range_to_lsp(fact.line - view.offset, fact.column, fact.end_line - view.offset, fact.end_column)
    if anchor is None:
        f = unique[0]
        anchor = index.range_to_lsp(f.line - view.offset, f.column, f.end_line - view.offset, f.end_column)
    separator = "\n\n---\n\n" if markdown else "\n\n"
    kind = types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText
    return types.Hover(contents=types.MarkupContent(kind=kind, value=separator.join(sections)), range=anchor)


# -- inlay hints -----------------------------------------------------------------------------------

# An assignment target: the span is followed by `=` (not `==`), an augmented operator, or an annotation.
_ASSIGNED = re.compile(r"\s*(?::[^=]*)?(?:=(?!=)|(?:\*\*|//|>>|<<|[-+*/@%&|^])=)")


def plain_label(fact: StateFact) -> str:
    """The fact's state in two or three plain words, for inlay hints ("requires grad", "no grad")."""
    summary = fact.summary
    if "graph already freed by backward" in summary:
        return "after backward" if not summary.startswith("maybe ") else "maybe after backward"
    if summary.startswith("backward consumes this graph"):
        return "runs backward"
    if summary.startswith("requires grad"):
        # Whether an op saved the value for backward is in the tooltip; the hint stays two words.
        return "parameter" if " · parameter" in summary else "requires grad"
    if summary.startswith("no gradient"):
        return "no grad"
    if summary.startswith("may or may not"):
        return "grad unknown"
    return fact.label


def _state_kind(fact: StateFact) -> str:
    """The coarse state a transition is about: gradients or none, and whether backward ran."""
    label = plain_label(fact)
    if label in ("requires grad", "parameter"):
        return "grad"
    return label


def is_target(fact: StateFact, line_text: str, column0: int) -> bool:
    """Whether the fact's span (ending at code-point `column0` of its line) is an assignment target."""
    return fact.line == fact.end_line and bool(_ASSIGNED.match(line_text, column0))


def hinted_facts(facts: Sequence[StateFact], lines: Sequence[str], mode: str) -> list[tuple[int, StateFact]]:
    """The facts that get an inlay hint, with their index in `facts`.

    `transitions`: where a name is first assigned a tensor that requires grad (`out = model(x)`), where
    an assigned name's state changes from what it was (`x = x.detach()`), where a value computed from
    tensors that require grad has none (`y = w * 3` under `torch.no_grad()`), and the engine's own
    transitions (`loss.backward()`), at most one per line. `all`: every name and attribute (not every
    call or sub-expression), so a line keeps its width readable.
    """
    chosen: list[tuple[int, StateFact]] = []
    last: dict[tuple[int, str], str] = {}
    used_lines: set[int] = set()
    scope_of = _scopes(lines)
    order = sorted(range(len(facts)), key=lambda i: (facts[i].line, facts[i].column))
    # Lines where some value read (not assigned) requires grad.
    grad_inputs = set()
    for fact in facts:
        text = lines[fact.end_line - 1] if 0 < fact.end_line <= len(lines) else ""
        if _state_kind(fact) == "grad" and not is_target(fact, text, fact.end_column - 1):
            grad_inputs.add(fact.line)
    for i in order:
        fact = facts[i]
        name = fact.name
        simple = bool(re.fullmatch(r"[A-Za-z_][\w.]*", name))
        if mode == "all":
            if simple:
                chosen.append((i, fact))
            continue
        line_text = lines[fact.end_line - 1] if 0 < fact.end_line <= len(lines) else ""
        target = simple and is_target(fact, line_text, fact.end_column - 1)
        kind = _state_kind(fact)
        if target:
            key = (scope_of(fact.line), name)
            before = last.get(key)
            last[key] = kind
            changed = (before is None and kind == "grad") or (before is not None and before != kind)
            # A value made from tensors that require grad, without a gradient itself: it was cut here.
            changed = changed or (before is None and kind == "no grad" and fact.line in grad_inputs)
            if changed and fact.line not in used_lines:
                chosen.append((i, fact))
                used_lines.add(fact.line)
            continue
        if fact.transition and fact.line not in used_lines:
            chosen.append((i, fact))
            used_lines.add(fact.line)
    chosen.sort(key=lambda pair: pair[0])
    return chosen


_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s")


def _scopes(lines: Sequence[str]) -> Callable[[int], int]:
    """line -> the line of the innermost `def` around it (0: module level), so that `out = model(x)` in
    `train()` and again in `evaluate()` are both the first assignment of `out` in their function."""
    defs: list[tuple[int, int]] = []  # (line, indentation) of each def
    for number, text in enumerate(lines, start=1):
        m = _DEF.match(text)
        if m:
            defs.append((number, len(m.group(1).expandtabs())))

    def scope(line: int) -> int:
        if not 0 < line <= len(lines):
            return 0
        text = lines[line - 1]
        indent = len(text) - len(text.lstrip())
        for number, def_indent in reversed(defs):
            if number < line and def_indent < indent:
                return number
        return 0

    return scope


def inlay_hint(fact: StateFact, view: View, index: LineIndex, data: Any) -> types.InlayHint:
    return types.InlayHint(
        position=index.to_lsp(fact.end_line - view.offset, fact.end_column),
        label=plain_label(fact),
        kind=types.InlayHintKind.Type,
        padding_left=True,
        data=data,
    )


def inlay_tooltip(fact: StateFact, snapshot: Snapshot, markdown: bool = True,
                  locator: Locator | None = None, links: bool = True) -> types.MarkupContent | str:
    text = fact_markdown(fact, snapshot, markdown, locator, links)
    return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text) if markdown else text


# -- trace findings across edits ---------------------------------------------------------------------


def line_map(old_text: str, new_text: str) -> dict[int, int]:
    """Old 1-based line -> new 1-based line, for the lines an edit left as they were.

    Lines inside a replaced, inserted or deleted block have no entry: a finding there is about text
    that is no longer what the trace ran.
    """
    import difflib

    old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    mapping: dict[int, int] = {}
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                mapping[i1 + k + 1] = j1 + k + 1
    return mapping


def remap_finding(finding: Finding, mapping: dict[int, int]) -> Finding | None:
    """`finding` moved with its lines, or None when an edit touched one of them. Related locations in
    the same file move too (or are dropped); a fix survives only if all its lines survived."""
    from dataclasses import replace

    lines = range(finding.line, finding.end_line + 1)
    if any(n not in mapping for n in lines):
        return None
    related = tuple(replace(r, line=mapping[r.line]) if r.path == finding.path else r
                    for r in finding.related if r.path != finding.path or r.line in mapping)
    fix = finding.fix
    if fix is not None:
        if all(e.line in mapping and e.end_line in mapping for e in fix.edits):
            fix = replace(fix, edits=tuple(replace(e, line=mapping[e.line], end_line=mapping[e.end_line])
                                           for e in fix.edits))
        else:
            fix = None
    return replace(finding, line=mapping[finding.line], end_line=mapping[finding.end_line], related=related, fix=fix)


def remap_findings(findings: Sequence[Finding], old_text: str, new_text: str) -> list[Finding]:
    """The trace findings that still stand after the text changed from `old_text` to `new_text`."""
    if old_text == new_text:
        return list(findings)
    mapping = line_map(old_text, new_text)
    out = []
    for finding in findings:
        moved = remap_finding(finding, mapping)
        if moved is not None:
            out.append(moved)
    return out
