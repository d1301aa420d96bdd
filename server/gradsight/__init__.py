"""gradsight: inline autograd hints for PyTorch."""

import os as _os
import sys as _sys

# Security: `python -m gradsight lsp` runs with the editor's workspace folder as cwd, and `-m` puts the cwd
# first on sys.path, so a workspace file named like a module gradsight imports later (json.py, enum.py...)
# would run inside the server. While `-m` is still importing us, sys.argv[0] is "-m": drop that entry.
if _sys.argv and _sys.argv[0] == "-m" and _sys.path and _sys.path[0] in ("", _os.getcwd()):
    del _sys.path[0]

__version__ = "0.1.0"
