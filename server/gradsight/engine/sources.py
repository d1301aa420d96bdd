"""Reading Python source files from disk, for every caller (CLI, workspace checks, cache workers)."""

from __future__ import annotations

import io
import pathlib
import stat
import tokenize


def read_source(path: pathlib.Path) -> tuple[str | None, str | None]:
    """Returns (text, problem). Honours PEP 263 coding cookies; never raises."""
    path = pathlib.Path(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None, f"{path}: not a regular file (a pipe or device?); skipped"
        raw = path.read_bytes()
    except OSError as exc:
        return None, f"{path}: cannot read ({exc.strerror or exc})"
    if b"\x00" in raw[:8192]:
        return None, f"{path}: looks binary (NUL bytes); skipped"
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        return raw.decode(encoding), None
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        return None, f"{path}: not valid text in its declared encoding ({exc}); skipped"
