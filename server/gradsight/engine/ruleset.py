"""The seam between the analysis and the checks that read its events.

The engine never imports `rules/`: the caller hands it a rule set, any object with the three methods of
`RuleSet` below. `gradsight.analysis.RULES` is the project's rule set (every rule in `rules/`); tests hand in
smaller ones. Keeping the dependency one-way lets the engine be tested, benchmarked and reused without the
rules and keeps a rule bug from reaching into engine internals (docs/ARCHITECTURE.md, "Layers").
"""

from __future__ import annotations

import importlib
from typing import Any, Optional, Protocol

# The module that provides the project's rule set when a caller hands none in. Named, not imported, so the
# engine's import graph stays free of `rules/`; `gradsight.analysis` registers itself on import, and this
# lookup only runs for callers that still use the engine directly (kept working while they move over).
DEFAULT_PROVIDER = "gradsight.analysis"


class RuleSet(Protocol):
    def active(self, config: Any) -> list:
        """Rule instances enabled by `config`, each with `code`, `events` (event classes) and `check(event, reporter)`."""

    def report_syntax_error(self, exc: SyntaxError, reporter: Any) -> None:
        """Report text that could not be cut into chunks: only the part before the error is analysed."""

    def report_skipped(self, reporter: Any, msg: str, line: int, col: int, first: int, last: int) -> None:
        """Report a chunk (lines first..last) that does not parse on its own and was skipped."""


class _Registry:
    """Holds the default rule set once its provider registered it (set once per process, never cleared)."""

    def __init__(self) -> None:
        self.default: Optional[RuleSet] = None


REGISTRY = _Registry()


def register_default(rules: RuleSet) -> None:
    REGISTRY.default = rules


def default_rules() -> RuleSet:
    if REGISTRY.default is None:
        importlib.import_module(DEFAULT_PROVIDER)  # registers itself
    if REGISTRY.default is None:
        raise RuntimeError(f"no rule set: hand one in, or import {DEFAULT_PROVIDER}")
    return REGISTRY.default
