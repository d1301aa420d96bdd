"""gradsight: inline autograd hints for PyTorch."""

__version__ = "0.1.0"
