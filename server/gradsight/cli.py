"""The `gradsight` command line (ruff's conventions).

    gradsight check [PATH...] [--select ...] [--ignore ...] [--output-format text|json|sarif|github]
                    [--exit-zero] [--fix] [--unsafe-fixes] [--no-cache] [--config FILE]
    gradsight rule GS301          print a rule's documentation
    gradsight rules               list every rule
    gradsight lsp                 start the language server on stdio
    gradsight trace FILE ...      run a script under autograd instrumentation (see docs/trace.md)

Exit codes: 0 clean, 1 findings (or a trace that found problems), 2 usage or I/O errors.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import stat
import sys
from typing import Iterable, Sequence

from . import __version__
from .config import Config, find_pyproject, load_pyproject
from .findings import Finding, Severity

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(value: str) -> list[str]:
    return [v.strip().upper() for v in value.split(",") if v.strip()]


def build_parser(with_trace: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gradsight", description="Autograd hints for PyTorch.")
    parser.add_argument("--version", action="version", version=f"gradsight {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="analyse files and directories")
    check.add_argument("paths", nargs="*", default=["."])
    check.add_argument("--select", type=_codes, default=None, help="rule codes or prefixes to enable (comma-separated)")
    check.add_argument("--ignore", type=_codes, default=None, help="rule codes or prefixes to disable")
    check.add_argument("--extend-select", type=_codes, default=None)
    check.add_argument("--output-format", choices=("text", "json", "sarif", "github"), default="text")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix, apply unsafe fixes too")
    check.add_argument("--no-cache", action="store_true", help="ignore and do not write the on-disk cache")
    check.add_argument("--config", type=pathlib.Path, default=None, help="a pyproject.toml to read settings from")
    check.add_argument("--jobs", "-j", type=int, default=0, help="parallel workers (0: one per core)")
    check.add_argument("--show-problems", action="store_true", default=True, help=argparse.SUPPRESS)

    rule = sub.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code")
    rules = sub.add_parser("rules", help="list the rules")
    rules.add_argument("--output-format", choices=("text", "json"), default="text")

    lsp = sub.add_parser("lsp", help="start the language server on stdio")
    lsp.add_argument("--log-level", default=None)
    lsp.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default and only transport)")

    trace = sub.add_parser("trace", help="run a script under autograd instrumentation")
    try:
        if not with_trace:  # `gradsight lsp` starts faster without importing the tracer's front end
            raise ImportError
        from .trace import cli as trace_cli

        trace_cli.add_arguments(trace)
    except Exception:  # noqa: BLE001 - the tracer is optional; `check` must work without it
        trace.add_argument("file")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Messages echo user identifiers and paths: never die on a console that cannot encode them.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(with_trace=argv[:1] != ["lsp"])
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_ERROR if exc.code not in (0, None) else EXIT_CLEAN
    try:
        if args.command == "check":
            return run_check(args)
        if args.command == "rule":
            return run_rule(args.code)
        if args.command == "rules":
            return run_rules(args.output_format)
        if args.command == "lsp":
            from .lsp import main as lsp_main

            return lsp_main(["--log-level", args.log_level] if args.log_level else [])
        if args.command == "trace":
            from .trace import cli as trace_cli

            return trace_cli.run_from_args(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    return EXIT_ERROR


# ---------------------------------------------------------------- check
def discover(paths: Iterable[str], config: Config, root: pathlib.Path, errors: list[str]) -> list[pathlib.Path]:
    files: list[pathlib.Path] = []
    seen: set[pathlib.Path] = set()
    for raw in paths:
        p = pathlib.Path(raw)
        if not p.exists():
            errors.append(f"{raw}: no such file or directory")
            continue
        if p.is_file():
            # Files named explicitly are analysed even if excluded by pattern (ruff's behaviour).
            if p.resolve() not in seen:
                seen.add(p.resolve())
                files.append(p)
            continue
        for dirpath, dirnames, filenames in os.walk(p):
            d = pathlib.Path(dirpath)
            dirnames[:] = sorted(n for n in dirnames if not config.is_excluded(d / n, p) and not n.startswith("."))
            for name in sorted(filenames):
                f = d / name
                if name.endswith(".py") and not config.is_excluded(f, p) and f.resolve() not in seen:
                    seen.add(f.resolve())
                    files.append(f)
    return files


def read_source(path: pathlib.Path) -> tuple[str | None, str | None]:
    """Returns (text, problem). Honours PEP 263 coding cookies; never raises."""
    import io
    import tokenize

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


def load_config(args) -> tuple[Config, list[str], pathlib.Path]:
    problems: list[str] = []
    start = pathlib.Path(args.paths[0] if args.paths else ".")
    pyproject = args.config or find_pyproject(start if start.exists() else pathlib.Path("."))
    config = Config()
    root = pathlib.Path(".").resolve()
    if pyproject is not None:
        config, problems = load_pyproject(pyproject)
        root = pyproject.parent.resolve()
    overrides = {}
    if args.select is not None:
        overrides["select"] = args.select
    if args.extend_select:
        overrides["select"] = list(overrides.get("select", config.select)) + args.extend_select
    if args.ignore is not None:
        overrides["ignore"] = list(config.ignore) + args.ignore
    if overrides:
        config, more = Config.from_mapping(overrides, config)
        problems += more
    return config, problems, root


def run_check(args) -> int:
    from .engine.cache import check_files

    config, problems, root = load_config(args)
    errors: list[str] = []
    files = discover(args.paths, config, root, errors)
    results = check_files(files, config, use_cache=not args.no_cache, jobs=args.jobs, root=root)
    findings: list[Finding] = []
    for path, file_findings, file_problems in results:
        problems.extend(file_problems)
        if args.fix and file_findings:
            file_findings = apply_fixes_to_file(path, file_findings, config, args.unsafe_fixes, problems)
        findings.extend(file_findings)
    out = sys.stdout
    fmt = args.output_format
    if fmt == "json":
        json.dump([f.to_json() for f in findings], out, indent=2)
        out.write("\n")
    elif fmt == "sarif":
        json.dump(to_sarif(findings), out, indent=2)
        out.write("\n")
    elif fmt == "github":
        for f in findings:
            level = {"error": "error", "warning": "warning"}.get(f.severity.value, "notice")
            msg = f.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
            out.write(f"::{level} title=gradsight {f.code},file={f.path},line={f.line},col={f.column},"
                      f"endLine={f.end_line},endColumn={f.end_column}::{f.code} {msg}\n")
    else:
        for f in findings:
            fix = " [*]" if f.fix and f.fix.applicability.value == "safe" else ""
            out.write(f"{f.path}:{f.line}:{f.column}: {f.code}{fix} {f.severity.value}: {f.message}\n")
            for r in f.related:
                out.write(f"    {r.path}:{r.line}:{r.column}: note: {r.message}\n")
        if findings:
            n_fix = sum(1 for f in findings if f.fix and f.fix.applicability.value == "safe")
            out.write(f"Found {len(findings)} problem{'s' if len(findings) != 1 else ''}"
                      + (f" ({n_fix} fixable with --fix)" if n_fix else "") + ".\n")
        elif not errors:
            out.write(f"All checks passed ({len(files)} file{'s' if len(files) != 1 else ''}).\n")
    for msg in problems + errors:
        sys.stderr.write(f"gradsight: {msg}\n")
    if errors:
        return EXIT_ERROR
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def apply_fixes_to_file(path: pathlib.Path, findings: list[Finding], config: Config, unsafe: bool,
                        problems: list[str]) -> list[Finding]:
    from .engine import analyze_source
    from .fixes import apply_fixes

    text, problem = read_source(path)
    if text is None:
        problems.append(problem or f"{path}: cannot read")
        return findings
    new_text, count = apply_fixes(text, findings, unsafe=unsafe)
    if count == 0:
        return findings
    try:
        path.write_text(new_text, encoding="utf-8")
    except OSError as exc:
        problems.append(f"{path}: cannot write fixes ({exc})")
        return findings
    sys.stderr.write(f"gradsight: fixed {count} problem{'s' if count != 1 else ''} in {path}\n")
    return analyze_source(new_text, str(path), config).findings


def to_sarif(findings: list[Finding]) -> dict:
    from .rules import all_rules

    rules = [{"id": r.code, "name": r.name, "shortDescription": {"text": r.summary},
              "helpUri": r.docs_url(), "defaultConfiguration": {"level": _sarif_level(r.severity)}}
             for r in all_rules()]
    results = []
    for f in findings:
        results.append({
            "ruleId": f.code,
            "level": _sarif_level(f.severity),
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": pathlib.Path(f.path).as_posix()},
                "region": {"startLine": f.line, "startColumn": f.column, "endLine": f.end_line,
                           "endColumn": f.end_column}}}],
            "relatedLocations": [{"id": i, "message": {"text": r.message}, "physicalLocation": {
                "artifactLocation": {"uri": pathlib.Path(r.path).as_posix()},
                "region": {"startLine": r.line, "startColumn": r.column}}} for i, r in enumerate(f.related)],
        })
    return {"version": "2.1.0", "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "runs": [{"tool": {"driver": {"name": "gradsight", "version": __version__, "rules": rules}},
                      "results": results}]}


def _sarif_level(sev: Severity) -> str:
    return {"error": "error", "warning": "warning", "information": "note", "hint": "note"}[sev.value]


# ---------------------------------------------------------------- rules
def run_rule(code: str) -> int:
    from .rules import get_rule

    rule = get_rule(code)
    if rule is None:
        sys.stderr.write(f"gradsight: no rule {code!r}; `gradsight rules` lists them\n")
        return EXIT_ERROR
    sys.stdout.write(rule.docs_markdown())
    return EXIT_CLEAN


def run_rules(fmt: str) -> int:
    from .rules import all_rules

    if fmt == "json":
        json.dump([{"code": r.code, "name": r.name, "severity": r.severity.value, "summary": r.summary,
                    "fix": r.can_fix(), "family": r.family()} for r in all_rules()], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_CLEAN
    for r in all_rules():
        sys.stdout.write(f"{r.code}  {r.name:<32} {r.severity.value:<11} {'fix' if r.can_fix() else '   '}  {r.summary}\n")
    return EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
