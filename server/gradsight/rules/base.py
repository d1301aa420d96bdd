"""What a rule is: metadata, documentation, self-tests, and a `check` that turns engine events into findings.

A rule never walks the syntax tree itself. The engine (`gradsight.engine`) interprets the code and
emits typed events (`gradsight.engine.events`) at the moments that matter (a backward call, an in-place
op, an optimizer built from tensors...); each rule declares which event types it handles and decides,
from the abstract state attached to the event, whether PyTorch would really fail.

Every rule carries its own VALID and INVALID examples (Fixit's idea): `tests/test_rules.py` runs them all,
and `tests/test_rules_torch.py` runs each INVALID example under real PyTorch to prove it really fails.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Iterable

from ..engine.astwalk import dotted_name  # noqa: F401 - shared by the rules that match spellings
from ..engine.report import text as msg
from ..findings import Applicability, Severity

if TYPE_CHECKING:  # pragma: no cover
    from ..engine.events import Event
    from ..engine.report import Reporter

DOCS_BASE = "https://github.com/gradsight/gradsight/blob/main/docs/rules/"


def at(fact):
    """'line 12', or 'helpers.py line 12' for a fact in another workspace file (a `report.Text` when the line is
    one of the analysed file's: positions stay data)."""
    if fact.path:
        return f"{fact.path.replace(chr(92), '/').rsplit('/', 1)[-1]} line {fact.line}"
    return msg("line ", fact.line)


def add_at_origin(rule, report, node, origin, message: str, related: list) -> None:
    """Report where the fix goes: the whole line of `origin` (the statement that made the value to detach or to
    compute without gradient) when it is another line of this file, through `report.add_in` when it is in another
    workspace file, else at `node`; `related` names `node`'s role (the loss, the policy term)."""
    line = report.source.span(node)[0]
    if origin is not None and origin.path is None and isinstance(origin.line, int) and origin.line != line \
            and 1 <= origin.line <= len(report.source.lines):
        report.add(rule, node, message, related=related, span=report.source.line_span(origin.line))
        return
    if origin is not None and origin.path is not None and report.add_in(rule, origin, message, related=related):
        return
    report.add(rule, node, message)


@dataclass(frozen=True)
class Invalid:
    """Code the rule must flag.

    `line` is the 1-based line the finding must stand on. `fixed` is the text after applying the
    rule's fix (None when the rule offers no fix for this example). `runtime` says what running the
    example under PyTorch does: "raises: <substring of the message>" or "silent: <python expression
    that must be true in the example's namespace afterwards>".
    """

    code: str
    line: int
    runtime: str
    fixed: str | None = None
    severity: Severity | None = None  # when set, the finding must have exactly this severity
    # Lines where another rule may also report (warning or above): the line that fails when the statement to
    # change (`line`) is not changed, e.g. the training loop's backward after a backward inside `forward`.
    also: tuple = ()


@dataclass(frozen=True)
class Valid:
    """Code the rule must stay quiet on (and that runs cleanly under PyTorch)."""

    code: str


@dataclass(frozen=True)
class FixTemplate:
    title: str
    applicability: Applicability


class Rule:
    """Base class; subclasses live one per file in `gradsight/rules/gsNNN_<name>.py`."""

    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, reads well after "allow": "inplace-on-saved-tensor"
    severity: ClassVar[Severity]  # the default when the engine is certain
    summary: ClassVar[str]  # one sentence, shown in hovers and `gradsight rules`
    events: ClassVar[tuple[type, ...]] = ()

    # Documentation sections (ruff's layout). Markdown.
    what_it_does: ClassVar[str]
    why_bad: ClassVar[str]
    example: ClassVar[str]
    use_instead: ClassVar[str]
    fix_safety: ClassVar[str] = "This rule offers no automatic fix."
    references: ClassVar[tuple[str, ...]] = ()

    valid: ClassVar[tuple[Valid, ...]] = ()
    invalid: ClassVar[tuple[Invalid, ...]] = ()

    def check(self, event: "Event", report: "Reporter") -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def docs_url(cls) -> str:
        return f"{DOCS_BASE}{cls.code}.md"

    @classmethod
    def can_fix(cls) -> bool:
        """Derived from the examples, so it cannot drift from what the rule really does."""
        return any(inv.fixed is not None for inv in cls.invalid)

    @classmethod
    def family(cls) -> str:
        return FAMILIES.get(cls.code[:3], "Other")

    @classmethod
    def docs_markdown(cls) -> str:
        refs = "\n".join(f"- {r}" for r in cls.references) or "- (none)"
        fix = "Yes" if cls.can_fix() else "No"
        return (
            f"# {cls.code} `{cls.name}`\n\n"
            f"*{cls.family()}* · default severity **{cls.severity.value}** · fix available: {fix}\n\n"
            f"{cls.summary}\n\n"
            f"## What it does\n\n{cls.what_it_does.strip()}\n\n"
            f"## Why is this bad?\n\n{cls.why_bad.strip()}\n\n"
            f"## Example\n\n```python\n{cls.example.strip()}\n```\n\n"
            f"## Use instead\n\n```python\n{cls.use_instead.strip()}\n```\n\n"
            f"## Fix safety\n\n{cls.fix_safety.strip()}\n\n"
            f"## References\n\n{refs}\n"
        )


FAMILIES = {
    "GS0": "Input problems",
    "GS1": "Grad mode",
    "GS2": "Graph breaks",
    "GS3": "In-place operations",
    "GS4": "Backward and graph lifetime",
    "GS5": "Optimizers and leaves",
}


@dataclass
class RuleSet:
    rules: list[Rule] = field(default_factory=list)

    def for_event(self, event: "Event") -> Iterable[Rule]:
        for rule in self.rules:
            if isinstance(event, rule.events):
                yield rule


def tree_query(rule, tree: ast.Module):
    """One `Query` over `tree` per rule object, for event rules that ask file-wide questions on each event (the
    parent map is built once per tree, not once per event)."""
    from ..engine.query import Query

    memo = rule.__dict__.get("_tree_query")
    if memo is None or memo[0] is not tree:
        memo = rule.__dict__["_tree_query"] = (tree, Query(tree, {}, {}))
    return memo[1]
