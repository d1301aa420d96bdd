"""Names of the engine's pieces, gathered for callers inside the engine (`workspace.py` builds scopes) and for
tools. The engine holds no state here: the `Engine` object (engine/engine.py) owns every cache, and the
project's default instance lives with the façade, `gradsight.analysis.ENGINE`, which hands it the rule set."""

from __future__ import annotations

from .api import Analysis
from .chunks import Chunks, derived_parses, parse_prefix, recover_chunks
from .engine import Engine
from .incremental import FileState, reparse
from .ruleset import RuleSet
from .scope import MAX_BYTES, MAX_NESTING, build_scope

__all__ = ["Analysis", "Chunks", "Engine", "FileState", "MAX_BYTES", "MAX_NESTING", "RuleSet", "build_scope",
           "derived_parses", "parse_prefix", "recover_chunks", "reparse"]
