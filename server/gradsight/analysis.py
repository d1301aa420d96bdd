"""The analysis with the project's rules: the façade callers outside the engine use.

`engine/` knows nothing about `rules/` (docs/ARCHITECTURE.md, "Layers"); this module wires the two:
`RULES` is the rule set made of every rule in `rules/`, `ENGINE` the process's `Engine` (it owns every cache
of the analysis), and `analyze_source` runs that engine with that rule set handed in.
"""

from __future__ import annotations

from typing import Any, Optional

from .config import Config
from .engine.api import Analysis, StateFact
from .engine.engine import Engine
from .engine.sources import read_source


class ProjectRules:
    """Every rule in `rules/`, found once per process (`rules.all_rules` imports each rule module)."""

    def __init__(self) -> None:
        self._classes: Optional[tuple] = None

    def _all(self) -> tuple:
        if self._classes is None:
            from .rules import all_rules

            self._classes = tuple(all_rules())
        return self._classes

    def active(self, config: Config) -> list:
        return [r() for r in self._all() if config.is_enabled(r.code) and r.events]

    def report_syntax_error(self, exc: SyntaxError, reporter: Any) -> None:
        from .rules.gs001_syntax_error import SyntaxErrorRule

        SyntaxErrorRule.report(exc, reporter)

    def report_skipped(self, reporter: Any, msg: str, line: int, col: int, first: int, last: int) -> None:
        from .rules.gs001_syntax_error import SyntaxErrorRule

        SyntaxErrorRule.report_skipped(reporter, msg, line, col, first, last)

    def report_newer_syntax(self, reporter: Any, line: int, col: int, what: str) -> None:
        from .rules.gs001_syntax_error import SyntaxErrorRule

        SyntaxErrorRule.report_newer(reporter, line, col, what)


RULES = ProjectRules()
# The process's engine, with every cache of the analysis (`Engine`): the CLI, the language server and the tests
# share it through `analyze_source`. Tests that need cold analyses call `ENGINE.clear()` or make their own.
ENGINE = Engine()


def analyze_source(text: str, path: str = "<stdin>", config: Config | None = None, workspace=None,
                   rules=None) -> Analysis:
    """Analyse one file's text with the project's rules (or `rules`, a `engine.ruleset.RuleSet`)."""
    return ENGINE.analyze(text, path, config, workspace, rules=rules or RULES)


__all__ = ["Analysis", "ENGINE", "Engine", "ProjectRules", "RULES", "StateFact", "analyze_source", "read_source"]
