"""Settings: a typed tree with defaults, read from `[tool.gradsight]`, editor settings or the CLI.

A bad setting never stops gradsight: `Config.from_mapping` returns the config it could build plus
one message per value it had to drop, and the caller shows those messages.

`[tool.gradsight]` keys (the editor settings use the same names under `gradsight.`):

    select = ["GS3", "GS401"]      # codes or prefixes; default: every rule
    extend-select = ["GS5"]        # added to `select` (when select is set)
    ignore = ["GS205"]
    exclude = ["build", "*.ipynb"] # glob patterns, matched against paths relative to the project
    severity = { GS501 = "information" }
    inlay-hints = "transitions"    # "off" | "transitions" | "all"
    [tool.gradsight.trace]
    timeout = 60                   # seconds
    max-steps = 20                 # optimizer steps / backward calls before the trace stops the script
    device = "auto"                # "auto" | "cpu" | "cuda"
    memory-mb = 4096
"""

from __future__ import annotations

import fnmatch
import pathlib
import re
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[no-redef]

from .findings import Severity

INLAY_MODES = ("off", "transitions", "all")
DEVICES = ("auto", "cpu", "cuda")
DEFAULT_EXCLUDE = (".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", "build", "dist",
                   "site-packages", ".eggs")


@dataclass(frozen=True)
class TraceConfig:
    timeout: float = 60.0
    max_steps: int = 20
    device: str = "auto"
    memory_mb: int = 4096


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    severity: Mapping[str, Severity] = field(default_factory=dict)
    inlay_hints: str = "transitions"
    trace: TraceConfig = TraceConfig()
    # The oldest Python the project says it supports (`[project] requires-python`, or Poetry's `python`
    # dependency), as (major, minor); None when not stated. GS001 reads it for Python 3.12 syntax.
    requires_python: "tuple[int, int] | None" = None

    def is_enabled(self, code: str) -> bool:
        if self.select and not any(code.startswith(p) for p in self.select):
            return False
        return not any(code.startswith(p) for p in self.ignore)

    def severity_for(self, code: str, default: Severity) -> Severity:
        return self.severity.get(code, default)

    def is_excluded(self, path: pathlib.Path, root: pathlib.Path | None = None) -> bool:
        """Patterns match names below `root` (the directory being checked), never the directories above it:
        checking `.venv/lib/.../site-packages/torch` explicitly must not exclude everything."""
        rel_path = path.relative_to(root) if root and path.is_relative_to(root) else path
        parts = rel_path.parts
        rel = str(rel_path)
        for pat in self.exclude:
            if pat in parts or fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(path.name, pat):
                return True
        return False

    @staticmethod
    def from_mapping(data: Mapping[str, Any], base: "Config | None" = None) -> tuple["Config", list[str]]:
        """Build a config from a `[tool.gradsight]`-shaped mapping; returns (config, problems)."""
        cfg = base or Config()
        problems: list[str] = []
        if not isinstance(data, Mapping):
            return cfg, [f"gradsight settings must be a table, got {type(data).__name__}; using defaults"]
        norm = {str(k).replace("_", "-"): v for k, v in data.items()}
        known = {"select", "extend-select", "ignore", "exclude", "extend-exclude", "severity", "inlay-hints", "trace"}
        for key in norm:
            if key not in known:
                problems.append(f"unknown gradsight setting {key!r} ignored")

        def codes(key: str) -> tuple[str, ...] | None:
            if key not in norm or norm[key] is None:
                return None
            val = norm[key]
            if isinstance(val, str):
                val = [v.strip() for v in val.split(",") if v.strip()]
            if not isinstance(val, (list, tuple)) or not all(isinstance(v, str) for v in val):
                problems.append(f"setting {key!r} must be a list of rule codes or prefixes; using the default")
                return None
            bad = [v for v in val if not v.upper().startswith("GS") and v.upper() != "ALL"]
            if bad:
                problems.append(f"setting {key!r}: {', '.join(bad)} are not gradsight codes (GSxxx); ignored")
            return tuple(v.upper() for v in val if v not in bad and v.upper() != "ALL")

        if (sel := codes("select")) is not None:
            cfg = replace(cfg, select=sel)
        # extend-select adds to an explicit select; an empty select already means every rule (ruff's semantics).
        if (ext := codes("extend-select")) and cfg.select:
            cfg = replace(cfg, select=cfg.select + ext)
        if (ign := codes("ignore")) is not None:
            cfg = replace(cfg, ignore=ign)
        for key in ("exclude", "extend-exclude"):
            if key in norm:
                val = norm[key]
                if isinstance(val, list) and all(isinstance(v, str) for v in val):
                    cfg = replace(cfg, exclude=(tuple(val) if key == "exclude" else cfg.exclude + tuple(val)))
                else:
                    problems.append(f"setting {key!r} must be a list of glob patterns; using the default")
        if "severity" in norm:
            val = norm["severity"]
            if isinstance(val, Mapping):
                sev: dict[str, Severity] = dict(cfg.severity)
                for code, level in val.items():
                    try:
                        sev[str(code).upper()] = Severity(str(level).lower().replace("info", "information")
                                                          .replace("informationrmation", "information"))
                    except ValueError:
                        problems.append(f"severity for {code}: {level!r} is not one of error, warning, "
                                        "information, hint; ignored")
                cfg = replace(cfg, severity=sev)
            else:
                problems.append("setting 'severity' must be a table of code = level; using the default")
        if "inlay-hints" in norm:
            val = norm["inlay-hints"]
            if val in INLAY_MODES:
                cfg = replace(cfg, inlay_hints=val)
            else:
                problems.append(f"setting 'inlay-hints' must be one of {', '.join(INLAY_MODES)}; "
                                f"got {val!r}, using {cfg.inlay_hints!r}")
        if "trace" in norm:
            cfg = replace(cfg, trace=_trace_from(norm["trace"], cfg.trace, problems))
        return cfg, problems


def _trace_from(data: Any, base: TraceConfig, problems: list[str]) -> TraceConfig:
    if not isinstance(data, Mapping):
        problems.append("setting 'trace' must be a table; using the defaults")
        return base
    out = base
    norm = {str(k).replace("_", "-"): v for k, v in data.items()}
    checks = {
        "timeout": ("timeout", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 3600,
                    "a number of seconds between 0 and 3600"),
        "max-steps": ("max_steps", lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 100000,
                      "a positive whole number"),
        "device": ("device", lambda v: v in DEVICES, "one of auto, cpu, cuda"),
        "memory-mb": ("memory_mb", lambda v: isinstance(v, int) and not isinstance(v, bool) and 64 <= v <= 1 << 20,
                      "a whole number of MiB (at least 64)"),
    }
    for key, val in norm.items():
        if key not in checks:
            problems.append(f"unknown trace setting {key!r} ignored")
            continue
        attr, ok, want = checks[key]
        if ok(val):
            out = replace(out, **{attr: val})
        else:
            problems.append(f"trace setting {key!r} must be {want}; got {val!r}, using {getattr(base, attr)!r}")
    return out


def find_pyproject(start: pathlib.Path) -> pathlib.Path | None:
    start = start.resolve()
    for d in [start, *start.parents] if start.is_dir() else [start.parent, *start.parent.parents]:
        candidate = d / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_pyproject(path: pathlib.Path, base: Config | None = None) -> tuple[Config, list[str]]:
    """Read `[tool.gradsight]` from a pyproject.toml; a malformed file gives a message and the defaults."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return base or Config(), [f"{path}: cannot read [tool.gradsight] ({exc}); using defaults"]
    tool = data.get("tool", {})
    oldest = _oldest_python(data)
    base = base or Config()
    if oldest is not None:
        base = replace(base, requires_python=oldest)
    if not isinstance(tool, Mapping):
        return base, [f"{path}: `tool` is not a table, so there is no [tool.gradsight]; using defaults"]
    table = tool.get("gradsight")
    if table is None:
        return base, []
    cfg, problems = Config.from_mapping(table, base)
    return cfg, [f"{path}: {p}" for p in problems]


_LOWER_BOUND = re.compile(r"(>=|~=|==|\^|~|>)\s*(\d+)\.(\d+)")


def _oldest_python(data: Mapping) -> "tuple[int, int] | None":
    """The lowest Python (major, minor) that `requires-python` (or Poetry's `python = "^3.10"`) admits, from its
    lower bounds (`>=3.10`, `~=3.11`, `^3.10`, `==3.12.*`); None when there is none or it cannot be read."""
    spec = None
    project = data.get("project")
    if isinstance(project, Mapping):
        spec = project.get("requires-python")
    if spec is None:
        poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), Mapping) else {}
        deps = poetry.get("dependencies", {}) if isinstance(poetry, Mapping) else {}
        spec = deps.get("python") if isinstance(deps, Mapping) else None
    if not isinstance(spec, str):
        return None
    bounds = []
    for clause in spec.replace("||", ",").replace("|", ",").split(","):
        m = _LOWER_BOUND.search(clause)
        if m is None:
            continue
        bounds.append((int(m.group(2)), int(m.group(3))))  # `>3.10` admits 3.10.1: the same minor as `>=`
    return min(bounds) if bounds else None
