"""The engine's public surface: what the CLI, the language server and the tests call.

`analyze_source(text, path, config)` never raises on bad code and never does I/O except through
`Workspace` (reading sibling files for cross-file summaries). It returns an `Analysis`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..findings import Finding


@dataclass(frozen=True)
class StateFact:
    """What the analysis knows about one tensor-valued expression, for hovers and inlay hints.

    Positions are 1-based lines and code-point columns (like findings).
    """

    line: int
    column: int
    end_line: int
    end_column: int
    name: str  # the expression's source text, e.g. "loss" or "self.fc(x)"
    summary: str  # one line, e.g. "requires grad · non-leaf · from `self.fc(x)` (line 12)"
    label: str  # a short inlay label, e.g. "grad · non-leaf"
    chain: tuple[tuple[int, str], ...] = ()  # (line, fact) pairs that led here, oldest first
    transition: bool = False  # True where the gradient state changes here (gains/loses history, saved, ...)
    uncertain: bool = False  # whether it requires grad is not known (the label says "maybe"); decisions read this


@dataclass
class Analysis:
    path: str
    findings: list[Finding] = field(default_factory=list)
    facts: list[StateFact] = field(default_factory=list)
    # Plain-language problems the user should see once, e.g. "file too large, analysed the first N lines".
    problems: list[str] = field(default_factory=list)
    # Workspace files whose definitions this analysis used: path -> sha1 of their text (for caches).
    dependencies: dict[str, str] = field(default_factory=dict)
    # The file's import statements as ("import" | "from", module, level, names), for the editor's import graph.
    imports: tuple = ()
