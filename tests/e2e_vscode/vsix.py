"""The packaged extension for the tests that need it (tests/test_vsix.py and test_vscode.py).

`$GRADSIGHT_VSIX` if set; else build/gradsight-<version>-linux-x64.vsix, rebuilt with
scripts/package-vsix.sh when any of its sources is newer. The path is then put in
`$GRADSIGHT_VSIX`, so one pytest run packages at most once.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["package.json", "package-lock.json", "tsconfig.json", ".vscodeignore", "pyproject.toml",
           "scripts/package-vsix.sh", "client", "server/gradsight"]


def packaged_vsix() -> Path:
    given = os.environ.get("GRADSIGHT_VSIX")
    if given:
        return Path(given)
    version = json.loads((ROOT / "package.json").read_text())["version"]
    out = ROOT / "build" / f"gradsight-{version}-linux-x64.vsix"
    if not out.exists() or out.stat().st_mtime < _newest_source():
        proc = subprocess.run(["bash", "scripts/package-vsix.sh"], cwd=ROOT, capture_output=True, text=True,
                              timeout=900)
        assert proc.returncode == 0, f"scripts/package-vsix.sh failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    os.environ["GRADSIGHT_VSIX"] = str(out)
    return out


def _newest_source() -> float:
    newest = 0.0
    for name in SOURCES:
        path = ROOT / name
        files = path.rglob("*") if path.is_dir() else [path]
        for f in files:
            if f.is_file() and "__pycache__" not in f.parts:
                newest = max(newest, f.stat().st_mtime)
    return newest
