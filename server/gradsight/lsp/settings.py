"""Editor settings: typed, with defaults, merged over `[tool.gradsight]`, never fatal.

Where settings come from, later ones winning key by key:

1. the defaults of `gradsight.config.Config`;
2. `[tool.gradsight]` of the pyproject.toml nearest to the document (cached, re-read when the
   client reports a change to any `pyproject.toml`);
3. `initializationOptions.settings` sent with `initialize`;
4. the `gradsight` section answered to `workspace/configuration` (re-read on
   `workspace/didChangeConfiguration`), or, for clients without `workspace/configuration`, the
   `gradsight` object pushed in `didChangeConfiguration`.

Editor values equal to the built-in defaults (an empty `select`, `inlayHints: "transitions"`, ...)
do not override `[tool.gradsight]`: clients such as the VS Code extension send every setting, set or
not, and a project's pyproject.toml must not be hidden by defaults nobody chose.

The VS Code client sends camelCase keys (`inlayHints`, `trace.maxSteps`); `Config.from_mapping`
reads the kebab-case spelling of `[tool.gradsight]`, so keys are normalised here first.

Keys that only the server or the editor integration uses are taken out before the rest goes to
`Config.from_mapping`: `logLevel` (off|error|warning|info|debug: what reaches `window/logMessage`
and stderr), `python` (the interpreter `gradsight.runTrace` runs the script with; default: the
server's own), `diagnosticMode` (`openFiles` | `workspace`), and keys that belong to editor
extensions (`trace.server`, `interpreter`, `path`, `enable`, `importStrategy`, `showNotifications`),
which are accepted and ignored.

Trust is *not* a setting a workspace can give itself: only `initializationOptions.trusted` (what
the VS Code extension computes from `vscode.workspace.isTrusted`) counts. A client that sends no
`trusted` key is trusted, because most editors have no notion of workspace trust; a client that
sends `trusted: false` cannot run traces (traces execute the user's code).
"""

from __future__ import annotations

import logging
import pathlib
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..config import Config, find_pyproject, load_pyproject

LOG_LEVELS = {
    "off": logging.CRITICAL + 10,
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}
DEFAULT_LOG_LEVEL = "info"

# Keys used by editor integrations rather than by the analysis; silently dropped.
_EDITOR_ONLY = {"interpreter", "path", "args", "enable", "import-strategy", "show-notifications", "server"}
_SERVER_KEYS = {"log-level", "python", "trusted", "diagnostic-mode"}
DIAGNOSTIC_MODES = ("openFiles", "workspace")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def kebab(key: str) -> str:
    """`maxSteps` -> `max-steps`, `inlay_hints` stays (Config accepts underscores too)."""
    return _CAMEL.sub(r"-\1", str(key)).lower()


def normalize(raw: Any) -> Any:
    """Normalise setting keys to kebab case: the top level and the `trace` table.

    The `severity` table is left alone: its keys are rule codes, not setting names.
    """
    if not isinstance(raw, Mapping):
        return raw
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = kebab(key)
        if name == "trace" and isinstance(value, Mapping):
            value = {kebab(k): v for k, v in value.items() if kebab(k) not in _EDITOR_ONLY}
        out[name] = value
    return out


@dataclass(frozen=True)
class ServerSettings:
    """What the server itself reads from the editor settings."""

    log_level: str = DEFAULT_LOG_LEVEL
    python: str | None = None
    # `openFiles`: diagnostics for open documents only; `workspace`: also for every file of the workspace
    # folders (see `workspace_scan.py`).
    diagnostic_mode: str = "openFiles"
    # The rest, normalised, for `Config.from_mapping` (may still hold bad values: checked there).
    analysis: Mapping[str, Any] = field(default_factory=dict)

    @property
    def log_level_number(self) -> int:
        return LOG_LEVELS[self.log_level]


def parse_editor_settings(*layers: Any) -> tuple[ServerSettings, list[str]]:
    """Merge settings layers (later wins, key by key; `trace` merged one level deeper)."""
    problems: list[str] = []
    merged: dict[str, Any] = {}
    for layer in layers:
        if layer is None:
            continue
        if not isinstance(layer, Mapping):
            problems.append(f"gradsight settings must be an object, got {type(layer).__name__}; ignored")
            continue
        for key, value in normalize(layer).items():
            if key == "trace" and isinstance(value, Mapping) and isinstance(merged.get("trace"), Mapping):
                merged["trace"] = {**merged["trace"], **value}
            else:
                merged[key] = value

    log_level = merged.pop("log-level", DEFAULT_LOG_LEVEL)
    if not isinstance(log_level, str) or log_level.lower() not in LOG_LEVELS:
        problems.append(f"setting 'logLevel' must be one of {', '.join(LOG_LEVELS)}; got {log_level!r}, "
                        f"using {DEFAULT_LOG_LEVEL!r}")
        log_level = DEFAULT_LOG_LEVEL
    python = merged.pop("python", None)
    if python is not None and (not isinstance(python, str) or not python.strip()):
        problems.append(f"setting 'python' must be a path to an interpreter; got {python!r}, using the server's own")
        python = None
    mode = merged.pop("diagnostic-mode", "openFiles")
    if not isinstance(mode, str) or mode.replace("_", "").lower() not in {m.lower() for m in DIAGNOSTIC_MODES}:
        problems.append(f"setting 'diagnosticMode' must be one of {', '.join(DIAGNOSTIC_MODES)}; got {mode!r}, "
                        "using 'openFiles'")
        mode = "openFiles"
    mode = next(m for m in DIAGNOSTIC_MODES if m.lower() == mode.replace("_", "").lower())
    merged.pop("trusted", None)  # only initializationOptions.trusted counts; see the module docs
    for key in _EDITOR_ONLY:
        merged.pop(key, None)
    if merged.get("trace") is None:
        merged.pop("trace", None)
    # Validate once now, so a bad value is reported when it is set, not at the first analysis.
    _, config_problems = Config.from_mapping(merged)
    problems.extend(config_problems)
    return ServerSettings(log_level=log_level.lower(), python=python or None, diagnostic_mode=mode,
                          analysis=merged), problems


def trusted_from_init(options: Any) -> bool:
    """Trusted unless the client explicitly sends `trusted: false` (see the module docs)."""
    if isinstance(options, Mapping):
        return options.get("trusted", True) is not False
    return True


def settings_from_init(options: Any) -> Any:
    """The settings object inside `initializationOptions` (`{"settings": {...}}`), if any."""
    if isinstance(options, Mapping):
        return options.get("settings")
    return None


class ConfigResolver:
    """Builds the `Config` for a file: editor settings over its nearest `[tool.gradsight]`.

    `generation` changes whenever any input changes; it is part of every diagnostic `resultId`, so a
    settings change makes the client's cached reports stale.
    """

    def __init__(self) -> None:
        self.settings = ServerSettings()
        self.generation = 0
        self._pyprojects: dict[pathlib.Path | None, tuple[Config, list[str]]] = {}

    def update(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._pyprojects.clear()
        self.generation += 1

    def same_effect(self, settings: ServerSettings) -> bool:
        """Whether `settings` would analyse exactly as the current ones (log level, python aside)."""
        return drop_defaults(settings.analysis) == drop_defaults(self.settings.analysis)

    def pyproject_changed(self) -> None:
        self._pyprojects.clear()
        self.generation += 1

    def config_for(self, path: str | None) -> tuple[Config, list[str]]:
        """The config for a file (problems are per source, so callers can show each once)."""
        pyproject = _nearest_pyproject(path)
        if pyproject not in self._pyprojects:
            base, problems = (Config(), []) if pyproject is None else load_pyproject(pyproject)
            self._pyprojects[pyproject] = (base, problems)
        base, problems = self._pyprojects[pyproject]
        config, editor_problems = Config.from_mapping(drop_defaults(self.settings.analysis), base)
        # The editor layer's problems were already reported by parse_editor_settings.
        del editor_problems
        return config, list(problems)


def drop_defaults(analysis: Mapping[str, Any]) -> dict[str, Any]:
    """The editor settings that differ from the built-in defaults (see the module docs)."""
    defaults = Config()
    default_values: dict[str, Any] = {
        "select": list(defaults.select), "ignore": list(defaults.ignore), "exclude": list(defaults.exclude),
        "extend-exclude": [], "severity": {}, "inlay-hints": defaults.inlay_hints, "inlay_hints": defaults.inlay_hints,
    }
    trace_defaults = {"timeout": defaults.trace.timeout, "max-steps": defaults.trace.max_steps,
                      "device": defaults.trace.device, "memory-mb": defaults.trace.memory_mb}
    out: dict[str, Any] = {}
    for key, value in analysis.items():
        if key == "trace" and isinstance(value, Mapping):
            trace = {k: v for k, v in value.items() if not (k in trace_defaults and v == trace_defaults[k])}
            if trace:
                out[key] = trace
        elif key in default_values and _same(value, default_values[key]):
            continue
        else:
            out[key] = value
    return out


def _same(value: Any, default: Any) -> bool:
    if isinstance(default, list) and isinstance(value, (list, tuple)):
        return list(value) == default
    if isinstance(default, dict) and isinstance(value, Mapping):
        return dict(value) == default
    return value == default


def _nearest_pyproject(path: str | None) -> pathlib.Path | None:
    if not path:
        return None
    try:
        candidate = pathlib.Path(path)
        if not candidate.is_absolute():
            return None
        return find_pyproject(candidate)
    except OSError:
        return None
