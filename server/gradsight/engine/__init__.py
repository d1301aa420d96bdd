"""The analysis engine: an abstract interpreter for PyTorch autograd state. See docs/ARCHITECTURE.md."""

from .api import Analysis, StateFact
from .driver import analyze_source

__all__ = ["Analysis", "StateFact", "analyze_source"]
