"""The seam between the analysis and the checks that read its events.

The engine never imports `rules/`: the caller hands it a rule set, any object with the three methods of
`RuleSet` below (and, optionally, `report_newer_syntax`). `gradsight.analysis.RULES` is the project's rule set (every rule in `rules/`); tests hand in
smaller ones. There is no default: an engine called without a rule set raises TypeError. Keeping the dependency one-way lets the engine be tested, benchmarked and reused without the
rules and keeps a rule bug from reaching into engine internals (docs/ARCHITECTURE.md, "Layers").
"""

from __future__ import annotations

from typing import Any, Protocol


class RuleSet(Protocol):
    def active(self, config: Any) -> list:
        """Rule instances enabled by `config`, each with `code`, `events` (event classes) and `check(event, reporter)`."""

    def report_syntax_error(self, exc: SyntaxError, reporter: Any) -> None:
        """Report text that could not be cut into chunks: only the part before the error is analysed."""

    def report_skipped(self, reporter: Any, msg: str, line: int, col: int, first: int, last: int) -> None:
        """Report a chunk (lines first..last) that does not parse on its own and was skipped."""

    # Optional (the engine asks with `getattr`): report Python 3.12 syntax that the running Python cannot parse
    # and that the engine analysed rewritten (`newsyntax.downgrade`); `what` names the construct.
    #
    # def report_newer_syntax(self, reporter: Any, line: int, col: int, what: str) -> None: ...
