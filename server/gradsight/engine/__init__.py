"""The analysis engine: an abstract interpreter for PyTorch autograd state. See docs/ARCHITECTURE.md."""

from .api import Analysis, StateFact
from .driver import DEFAULT_ENGINE, analyze_source
from .engine import Engine

__all__ = ["Analysis", "DEFAULT_ENGINE", "Engine", "StateFact", "analyze_source"]
