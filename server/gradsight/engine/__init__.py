"""The analysis engine: an abstract interpreter for PyTorch autograd state. See docs/ARCHITECTURE.md.

Callers outside the engine use the façade `gradsight.analysis` (`analyze_source`, `ENGINE`, `RULES`); code
that needs its own caches or another rule set makes an `Engine()` and hands the rules to `Engine.analyze`."""

from .api import Analysis, StateFact
from .engine import Engine

__all__ = ["Analysis", "Engine", "StateFact"]
