"""The entry point callers use: `analyze_source` runs the default `Engine` (engine/engine.py), which owns every
cache. Code that needs its own caches (a test that wants cold analyses, a benchmark comparing settings) makes
its own `Engine()`; `DEFAULT_ENGINE.clear()` empties the default one's."""

from __future__ import annotations

from typing import Optional

from ..config import Config
from .api import Analysis
from .chunks import Chunks, derived_parses, parse_prefix, recover_chunks
from .engine import Engine
from .incremental import FileState, reparse
from .ruleset import RuleSet
from .scope import MAX_BYTES, MAX_NESTING, build_scope

DEFAULT_ENGINE = Engine()


def analyze_source(text: str, path: str = "<stdin>", config: Config | None = None, workspace=None,
                   rules: Optional[RuleSet] = None) -> Analysis:
    """Analyse one file's text with the default engine (see `Engine.analyze`)."""
    return DEFAULT_ENGINE.analyze(text, path, config, workspace, rules)


# Names kept for callers that have not moved to `DEFAULT_ENGINE` yet: the default engine's own containers
# (emptied in place by `DEFAULT_ENGINE.clear()`), not caches of this module.
_DEF_CACHE = DEFAULT_ENGINE.units.entries
_FILE_CACHE = DEFAULT_ENGINE.files
STATS = DEFAULT_ENGINE.stats

__all__ = ["DEFAULT_ENGINE", "Chunks", "Engine", "FileState", "MAX_BYTES", "MAX_NESTING", "analyze_source",
           "build_scope", "derived_parses", "parse_prefix", "recover_chunks", "reparse"]
