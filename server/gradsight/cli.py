"""The `gradsight` command line (ruff's conventions; docs/cli.md is the full reference).

    gradsight check [PATH...] [--select ...] [--ignore ...] [--extend-select ...]
                    [--output-format text|json|sarif|github] [--exit-zero] [--fix] [--unsafe-fixes]
                    [--diff] [--show-fixes] [--statistics] [--quiet] [--color auto|always|never]
                    [--no-cache] [--config FILE] [--jobs N]
    gradsight check - --stdin-filename NAME   source from stdin (--fix prints the fixed text)
    gradsight rule GS301          print a rule's (or trace code's) documentation
    gradsight rules               list every rule and trace code
    gradsight lsp                 start the language server on stdio
    gradsight trace FILE ...      run a script under autograd instrumentation (see docs/trace.md)

Exit codes: 0 clean, 1 findings (or a trace that found problems; with --diff: fixes to apply),
2 usage or configuration errors (unknown rule selectors included) and I/O errors.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import stat
import sys
from typing import Iterable, Sequence

from . import __version__
from .config import Config, find_pyproject, load_pyproject
from .findings import Finding, Severity, drop_restated, sort_key

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
    check.add_argument("--project-root", type=pathlib.Path, default=None,
                       help="the project's folder, where imports are resolved from (default: the folder of the "
                            "nearest pyproject.toml, else the working directory)")
    check.add_argument("--jobs", "-j", type=int, default=0, help="parallel workers (0: one per core)")
    check.add_argument("--show-problems", action="store_true", default=True, help=argparse.SUPPRESS)
    add_check_output_arguments(check)

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


def add_check_output_arguments(check: argparse.ArgumentParser) -> None:
    """The ruff-style reporting flags of `check` (docs/cli.md describes each)."""
    check.add_argument("--diff", action="store_true",
                       help="print the fixes --fix would apply as a unified diff and write nothing (exit 1 if any)")
    check.add_argument("--show-fixes", action="store_true", help="with --fix, list the problems that were fixed")
    check.add_argument("--statistics", action="store_true", help="print a count per rule instead of each finding")
    check.add_argument("--quiet", "-q", action="store_true", help="print the findings and nothing else")
    check.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                       help="colour and code frames (auto: when stdout is a terminal; honours NO_COLOR, FORCE_COLOR)")
    check.add_argument("--stdin-filename", default=None, help="the name to report for source read from stdin (`-`)")


def main(argv: Sequence[str] | None = None) -> int:
    # Messages echo user identifiers and paths: never die on a console that cannot encode them.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    own_process = argv is None  # the program itself (console script, `python -m gradsight`), not a caller's call
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(with_trace=argv[:1] != ["lsp"])
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_ERROR if exc.code not in (0, None) else EXIT_CLEAN
    args.own_process = own_process
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


# ---------------------------------------------------------------- selectors and configuration
class UsageError(Exception):
    """A mistake in the command line or an explicit configuration: reported and the run exits 2 (ruff's rule)."""


SELECTOR_RE = re.compile(r"GS[0-9]{0,3}\Z")


def trace_rules() -> tuple:
    """The trace codes (GS900-) when the tracer's metadata module is present; the CLI works without it."""
    try:
        from .trace.codes import TRACE_RULES
    except Exception:  # noqa: BLE001 - an absent or broken trace package must not stop `check`
        return ()
    return tuple(TRACE_RULES)


def known_rules() -> list:
    """Every code gradsight can report, static rules first, then trace codes, each once, sorted by code."""
    from .rules import all_rules

    by_code = {r.code: r for r in all_rules()}
    for r in trace_rules():
        by_code.setdefault(r.code, r)
    return [by_code[c] for c in sorted(by_code)]


def is_valid_selector(selector: str, codes: Iterable[str]) -> bool:
    """A selector is ALL, a full code or a prefix of at least one existing code (ruff's definition):
    `GS3` and `GS301` are valid, `GS7`, `GS40 2` and `E501` are not."""
    sel = selector.strip().upper()
    if sel == "ALL":
        return True
    return bool(SELECTOR_RE.match(sel)) and any(c.startswith(sel) for c in codes)


def check_selectors(values: Iterable[str] | None, where: str, codes: set[str]) -> None:
    bad = [v for v in values or () if not is_valid_selector(v, codes)]
    if bad:
        raise UsageError("; ".join(f"unknown rule selector: `{v}` (in {where})" for v in bad))


def _check_static_selectors(values: Iterable[str] | None, where: str, static: set[str], codes: set[str]) -> None:
    only_trace = [v for v in values or () if not is_valid_selector(v, static) and is_valid_selector(v, codes)]
    if only_trace:
        raise UsageError("; ".join(f"unknown rule selector: `{v}` (in {where}): it matches only trace codes, which "
                                   "`gradsight check` never reports (they come from `gradsight trace`)"
                                   for v in only_trace))
    check_selectors(values, where, static)


def _read_toml(path: pathlib.Path) -> dict:
    from .config import tomllib

    if not path.is_file():
        raise UsageError(f"{path}: no such configuration file")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot parse the configuration file ({exc})") from None


def _settings_table(path: pathlib.Path, explicit: bool) -> dict | None:
    """`[tool.gradsight]` of a pyproject.toml. A file named with --config must exist and parse (exit 2 otherwise);
    a discovered one that does not parse is reported by `load_pyproject` and the defaults are used."""
    try:
        data = _read_toml(path)
    except UsageError:
        if explicit:
            raise
        return None
    tool = data.get("tool")
    table = tool.get("gradsight") if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


def load_config(args) -> tuple[Config, list[str], pathlib.Path]:
    """The settings for this run: pyproject.toml's `[tool.gradsight]`, then the command line on top.
    Unknown rule selectors anywhere raise UsageError (exit 2), so a typo never silently hides a rule."""
    problems: list[str] = []
    codes = {r.code for r in known_rules()}
    # `check` never reports trace codes, so selecting only those would silently check nothing: an error too
    # (`--select GS9` exits 2). Ignoring them is harmless, and the config file is shared with the editor, whose
    # trace results do carry them.
    static = codes - {r.code for r in trace_rules()}
    _check_static_selectors(args.select, "--select", static, codes)
    check_selectors(args.ignore, "--ignore", codes)
    _check_static_selectors(args.extend_select, "--extend-select", static, codes)
    stdin_name = getattr(args, "stdin_filename", None)
    first = stdin_name if (args.paths == ["-"] and stdin_name) else (args.paths[0] if args.paths else ".")
    start = pathlib.Path(first)
    if not start.exists():
        start = start.parent if start.parent.exists() else pathlib.Path(".")
    project_root = getattr(args, "project_root", None)
    pyproject = args.config or find_pyproject(start)
    if project_root is not None and args.config is None and pyproject is not None \
            and not pyproject.resolve().parent.is_relative_to(project_root.resolve()):
        pyproject = None  # a pyproject.toml above the project's folder belongs to another project
    config = Config()
    root = pathlib.Path(".").resolve()
    if pyproject is not None:
        table = _settings_table(pyproject, explicit=args.config is not None)
        if table is not None:
            for key in ("select", "ignore", "extend-select", "extend_select"):
                val = table.get(key)
                if isinstance(val, str):
                    val = [v for v in val.split(",") if v.strip()]
                if isinstance(val, list):
                    check_selectors([v for v in val if isinstance(v, str)], f"{pyproject} [tool.gradsight] {key}",
                                    codes)
        config, problems = load_pyproject(pyproject)
        root = pyproject.parent.resolve()
    if project_root is not None:
        root = project_root.resolve()
    overrides: dict = {}
    if args.select is not None:
        overrides["select"] = args.select
    if args.extend_select:
        base_select = overrides.get("select", config.select)
        # An empty select means every rule, so extending it changes nothing (ruff's extend-select semantics).
        if base_select and "ALL" not in base_select:
            overrides["select"] = list(base_select) + args.extend_select
    if args.ignore is not None:
        overrides["ignore"] = list(config.ignore) + args.ignore
    if overrides:
        config, more = Config.from_mapping(overrides, config)
        problems += more
    return config, problems, root


# ---------------------------------------------------------------- suppression comments
SUPPRESSION_RE = re.compile(r"#\s*gradsight:\s*ignore\[([^\]]*)\]")


def unknown_suppression_codes(text: str, path: str, codes: set[str]) -> list[str]:
    """Warnings for `# gradsight: ignore[...]` codes that name no rule. Ruff warns the same way for unknown
    `# noqa` codes ("Invalid rule code provided to `# noqa` at path:line: CODE") and does not fail the run."""
    out: list[str] = []
    if "gradsight:" not in text:
        return out
    for number, line in enumerate(text.splitlines(), 1):
        for m in SUPPRESSION_RE.finditer(line):
            for code in (c.strip() for c in m.group(1).split(",")):
                if code and not is_valid_selector(code, codes):
                    out.append(f"warning: Invalid rule code provided to `# gradsight: ignore` at {path}:{number}: "
                               f"{code}")
    return out


# ---------------------------------------------------------------- files that cannot be checked
def _max_chars() -> int:
    try:
        from .engine.driver import MAX_BYTES
    except Exception:  # noqa: BLE001 - the limit's home may move; the documented default stands in
        return 5_000_000
    return MAX_BYTES


def screen_files(files: list[pathlib.Path], codes: set[str], warnings: list[str]
                 ) -> tuple[list[pathlib.Path], list[str]]:
    """Split files into those to analyse and those skipped (binary, undecodable, too large, unreadable).
    Skipped files are reported and not counted as checked. Readable ones are also scanned for unknown
    suppression codes here, so each file is read once by the CLI."""
    limit = _max_chars()
    ok: list[pathlib.Path] = []
    skipped: list[str] = []
    for path in files:
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        if size > 4 * limit:  # more characters than the limit even at 4 bytes each: do not read it at all
            skipped.append(f"{path}: {size:,} bytes is over gradsight's limit of {limit:,} characters; skipped")
            continue
        text, problem = read_source(path)
        if text is None:
            msg = problem or f"{path}: cannot read"
            skipped.append(msg if msg.endswith("skipped") else f"{msg}; skipped")
            continue
        if len(text) > limit:
            skipped.append(f"{path}: {len(text):,} characters is over gradsight's limit of {limit:,}; skipped")
            continue
        warnings.extend(unknown_suppression_codes(text, str(path), codes))
        ok.append(path)
    return ok, skipped


# ---------------------------------------------------------------- running the analysis
PROGRESS_MIN_FILES = 40
PROGRESS_BATCH = 32


def analyse(files: list[pathlib.Path], config: Config, args, root: pathlib.Path, progress: bool):
    """check_files over all files; with `progress`, in batches with a counter on stderr (a terminal)."""
    from .engine.cache import check_files

    from .analysis import ENGINE, RULES

    if getattr(args, "own_process", False):
        # Everything imported so far lives as long as the process: out of the collector's way (`gc.freeze`), the
        # process' first full collection (inside the first analysis) does not walk it, nor do forked workers'
        # collections, which would copy their pages (docs/performance.md, "Sixteenth session").
        import gc

        gc.freeze()
    kwargs = dict(rules=RULES, engine=ENGINE, use_cache=not args.no_cache, jobs=args.jobs, root=root)
    if not progress:
        return check_files(files, config, **kwargs)
    results = []
    batch = max(PROGRESS_BATCH, (args.jobs or os.cpu_count() or 1) * 8)
    for i in range(0, len(files), batch):
        sys.stderr.write(f"\rgradsight: checking {i}/{len(files)} files")
        sys.stderr.flush()
        results.extend(check_files(files[i:i + batch], config, **kwargs))
    sys.stderr.write(f"\rgradsight: checked {len(files)}/{len(files)} files\n")
    return results


def regroup(results: list) -> list:
    """Findings by the file they stand in. A rule may put a finding in another file than the one analysed, where
    the fix goes (a metric's `self.total += pred` that the training script makes keep graphs: `Reporter.add_in`).
    Such a finding joins its file's list (a file that was not checked gets a list of its own, after the others),
    is shown once however many analysed files found it, and its path is written the way the checked files'
    paths are: relative to the current folder when those were given relative."""
    import dataclasses

    by_path: dict[str, tuple] = {}
    order: list[str] = []
    for path, found, problems in results:
        by_path[str(path)] = (path, [], problems)
        order.append(str(path))
    seen: set = set()
    for path, found, _ in results:
        relative = not pathlib.Path(str(path)).is_absolute()
        for f in found:
            if f.path != str(path):
                shown = _shown_path(f.path, relative)
                if shown != f.path:
                    f = dataclasses.replace(f, path=shown)
            if relative and any(pathlib.Path(r.path).is_absolute() for r in f.related):
                f = dataclasses.replace(f, related=tuple(dataclasses.replace(r, path=_shown_path(r.path, True))
                                                         for r in f.related))
            key = (f.path, f.line, f.column, f.code)
            if key in seen:
                continue
            seen.add(key)
            if f.path not in by_path:
                by_path[f.path] = (pathlib.Path(f.path), [], [])
                order.append(f.path)
            by_path[f.path][1].append(f)
    return [(by_path[p][0], sorted(drop_restated(by_path[p][1]), key=sort_key), by_path[p][2]) for p in order]


def _shown_path(path: str, relative: bool) -> str:
    if not relative or not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith("..") else rel


def _fixable(f: Finding, unsafe: bool) -> bool:
    if f.fix is None:
        return False
    kind = f.fix.applicability.value
    return kind == "safe" or (unsafe and kind == "unsafe")


def fix_text(text: str, findings: list[Finding], unsafe: bool) -> tuple[str, int]:
    from .fixes import apply_fixes

    return apply_fixes(text, findings, unsafe=unsafe)


def run_check(args) -> int:
    try:
        config, problems, root = load_config(args)
    except UsageError as exc:
        sys.stderr.write(f"gradsight: error: {exc}\n")
        return EXIT_ERROR
    if args.paths == ["-"]:
        return run_check_stdin(args, config, problems)
    codes = {r.code for r in known_rules()}
    errors: list[str] = []
    warnings: list[str] = []
    files = discover(args.paths, config, root, errors)
    files, skipped = screen_files(files, codes, warnings)
    progress = sys.stderr.isatty() and len(files) >= PROGRESS_MIN_FILES and not args.quiet
    results = regroup(analyse(files, config, args, root, progress))
    findings: list[Finding] = []
    fixed: list[Finding] = []
    diff_count = 0
    for path, file_findings, file_problems in results:
        problems.extend(file_problems)
        if args.diff and any(_fixable(f, args.unsafe_fixes) for f in file_findings):
            diff_count += write_diff(path, file_findings, args.unsafe_fixes, problems)
        elif args.fix and file_findings:
            before = file_findings
            file_findings = apply_fixes_to_file(path, file_findings, config, args.unsafe_fixes, problems,
                                                quiet=args.quiet)
            fixed.extend(_fixed_findings(before, file_findings))
        findings.extend(file_findings)
    # --quiet keeps errors and analysis problems but drops warnings and skip notes (ruff -q prints no warnings).
    for msg in ([] if args.quiet else warnings + skipped) + problems + errors:
        sys.stderr.write(f"gradsight: {msg}\n")
    if args.diff:
        if not args.quiet:
            sys.stderr.write(f"Would fix {diff_count} error{'s' if diff_count != 1 else ''}.\n"
                             if diff_count else "No errors would be fixed.\n")
        return EXIT_ERROR if errors else (EXIT_FINDINGS if diff_count else EXIT_CLEAN)
    color = use_color(args.color, sys.stdout)
    write_report(findings, args, sys.stdout, color=color, checked=len(files), skipped=len(skipped),
                 fixed=fixed, show_summary=not errors)
    if errors:
        return EXIT_ERROR
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _fixed_findings(before: list[Finding], after: list[Finding]) -> list[Finding]:
    """The findings a fix removed: those whose code occurs fewer times after fixing (lines move, codes do not)."""
    from collections import Counter

    left = Counter(f.code for f in after)
    out = []
    for f in before:
        if left[f.code] > 0:
            left[f.code] -= 1
        else:
            out.append(f)
    return out


def write_diff(path: pathlib.Path, findings: list[Finding], unsafe: bool, problems: list[str]) -> int:
    """Print what --fix would change in one file as a unified diff; writes nothing. Returns the fix count."""
    import difflib

    text, problem = read_source(path)
    if text is None:
        problems.append(problem or f"{path}: cannot read")
        return 0
    new_text, count = fix_text(text, findings, unsafe)
    if count:
        name = pathlib.Path(path).as_posix()
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                                                   fromfile=name, tofile=name))
        sys.stdout.write("\n")
    return count


def run_check_stdin(args, config: Config, problems: list[str]) -> int:
    """`gradsight check -`: the source comes from stdin, named by --stdin-filename. With --fix the fixed text
    goes to stdout and the remaining findings to stderr (ruff's behaviour); --diff prints the diff."""
    import io
    import tokenize

    from .analysis import analyze_source

    name = args.stdin_filename or "-"
    raw = sys.stdin.buffer.read()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        text = raw.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        sys.stderr.write(f"gradsight: error: {name}: stdin is not valid text ({exc})\n")
        return EXIT_ERROR
    codes = {r.code for r in known_rules()}
    for msg in unknown_suppression_codes(text, name, codes):
        sys.stderr.write(f"gradsight: {msg}\n")
    analysis = analyze_source(text, name, config)
    findings = list(analysis.findings)
    problems = problems + list(analysis.problems)
    for msg in problems:
        sys.stderr.write(f"gradsight: {msg}\n")
    if args.diff:
        import difflib

        new_text, count = fix_text(text, findings, args.unsafe_fixes)
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(keepends=True),
                                                   new_text.splitlines(keepends=True), fromfile=name, tofile=name))
        return EXIT_FINDINGS if count else EXIT_CLEAN
    fixed: list[Finding] = []
    if args.fix:
        new_text, count = fix_text(text, findings, args.unsafe_fixes)
        sys.stdout.write(new_text)
        if count:
            after = list(analyze_source(new_text, name, config).findings)
            fixed = _fixed_findings(findings, after)
            findings = after
        write_report(findings, args, sys.stderr, color=use_color(args.color, sys.stderr), checked=1, skipped=0,
                     fixed=fixed, show_summary=True, texts={name: new_text})
    else:
        write_report(findings, args, sys.stdout, color=use_color(args.color, sys.stdout), checked=1, skipped=0,
                     fixed=fixed, show_summary=True, texts={name: text})
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


# ---------------------------------------------------------------- reporting
def use_color(choice: str, stream) -> bool:
    """--color always/never win; with auto, NO_COLOR (non-empty) turns colour off, FORCE_COLOR (non-empty)
    turns it on, and otherwise colour follows whether the stream is a terminal (https://no-color.org)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


_ANSI = {"bold": "1", "red": "31", "yellow": "33", "cyan": "36", "blue": "34", "dim": "2"}


def _paint(text: str, style: str, color: bool) -> str:
    if not color:
        return text
    codes = ";".join(_ANSI[s] for s in style.split("+"))
    return f"\x1b[{codes}m{text}\x1b[0m"


def code_frame(f: Finding, lines: list[str], color: bool) -> list[str]:
    """The finding's lines with a gutter and carets under its span, one line of context each side (ruff's style)."""
    if not (1 <= f.line <= len(lines)):
        return []
    last = min(f.end_line if f.end_line >= f.line else f.line, f.line + 2, len(lines))
    first_ctx, last_ctx = max(1, f.line - 1), min(len(lines), last + 1)
    width = len(str(last_ctx))
    bar = _paint("|", "blue+bold", color)
    out = [f"{' ' * width} {bar}"]
    for n in range(first_ctx, last_ctx + 1):
        src = lines[n - 1].rstrip("\r\n").expandtabs(1)
        out.append(f"{_paint(str(n).rjust(width), 'blue+bold', color)} {bar} {src}")
        if n == f.line:
            start = max(f.column - 1, 0)
            end = f.end_column - 1 if f.end_line == f.line else len(src)
            carets = "^" * max(1, min(end, len(src)) - start)
            mark = _paint(f"{carets} {f.code}", "red+bold" if f.severity.value == "error" else "yellow+bold", color)
            out.append(f"{' ' * width} {bar} {' ' * start}{mark}")
    out.append(f"{' ' * width} {bar}")
    return out


def _source_lines(path: str, cache: dict, texts: dict | None) -> list[str]:
    if path not in cache:
        text = (texts or {}).get(path)
        if text is None:
            text, _ = read_source(pathlib.Path(path))
        cache[path] = (text or "").splitlines()
    return cache[path]


def write_report(findings: list[Finding], args, out, *, color: bool, checked: int, skipped: int,
                 fixed: list[Finding], show_summary: bool, texts: dict | None = None) -> None:
    fmt = args.output_format
    if args.statistics:
        write_statistics(findings, fmt, out, args.unsafe_fixes)
        return
    if fmt == "json":
        json.dump([f.to_json() for f in findings], out, indent=2)
        out.write("\n")
        return
    if fmt == "sarif":
        json.dump(to_sarif(findings), out, indent=2)
        out.write("\n")
        return
    if fmt == "github":
        for f in findings:
            level = {"error": "error", "warning": "warning"}.get(f.severity.value, "notice")
            msg = f.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
            out.write(f"::{level} title=gradsight {f.code},file={f.path},line={f.line},col={f.column},"
                      f"endLine={f.end_line},endColumn={f.end_column}::{f.code} {msg}\n")
        return
    frames: dict = {}
    for f in findings:
        mark = " [*]" if _fixable(f, args.unsafe_fixes) else ""
        sev = _paint(f.severity.value, "red+bold" if f.severity.value == "error" else "yellow+bold", color)
        out.write(f"{_paint(f.path, 'bold', color)}:{f.line}:{f.column}: {_paint(f.code, 'red+bold', color)}{mark} "
                  f"{sev}: {f.message}\n")
        if color:
            for row in code_frame(f, _source_lines(f.path, frames, texts), color):
                out.write(row + "\n")
        for r in f.related:
            out.write(f"    {r.path}:{r.line}:{r.column}: note: {r.message}\n")
    if args.show_fixes and fixed:
        write_fixed(fixed, out)
    if args.quiet or not show_summary:
        return
    write_summary(findings, out, checked=checked, skipped=skipped, unsafe=args.unsafe_fixes, fixed=len(fixed))


def write_summary(findings: list[Finding], out, *, checked: int, skipped: int, unsafe: bool, fixed: int) -> None:
    """ruff's closing lines: the count, how many --fix would fix, and how many unsafe fixes are hidden."""
    files = f"{checked} file{'s' if checked != 1 else ''}" + (f", {skipped} skipped" if skipped else "")
    if not findings:
        out.write(f"All checks passed ({files}).\n" if not fixed
                  else f"Found {fixed} problem{'s' if fixed != 1 else ''} ({fixed} fixed, 0 remaining).\n")
        return
    n = len(findings)
    head = f"Found {n} problem{'s' if n != 1 else ''}"
    out.write(head + (f" ({fixed} fixed, {n} remaining)" if fixed else "") + ".\n")
    n_fix = sum(1 for f in findings if _fixable(f, unsafe))
    hidden = 0 if unsafe else sum(1 for f in findings if f.fix and f.fix.applicability.value == "unsafe")
    hidden_text = (f"{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the `--unsafe-fixes` option"
                   if hidden else "")
    if n_fix:
        out.write(f"[*] {n_fix} fixable with the `--fix` option" + (f" ({hidden_text})" if hidden else "") + ".\n")
    elif hidden:
        out.write(f"No fixes available ({hidden_text}).\n")


def write_fixed(fixed: list[Finding], out) -> None:
    """--show-fixes: each fixed file with a count per code (ruff's layout)."""
    from collections import Counter

    out.write(f"Fixed {len(fixed)} problem{'s' if len(fixed) != 1 else ''}:\n")
    by_path: dict[str, Counter] = {}
    names: dict[str, str] = {}
    for f in fixed:
        by_path.setdefault(f.path, Counter())[f.code] += 1
        names[f.code] = f.name
    for path, counts in by_path.items():
        out.write(f"- {path}:\n")
        for code, count in sorted(counts.items()):
            out.write(f"    {count} × {code} ({names[code]})\n")


def write_statistics(findings: list[Finding], fmt: str, out, unsafe: bool) -> None:
    """--statistics: one row per code (count, code, [*] when fixable, name), most frequent first."""
    rows: dict[str, dict] = {}
    for f in findings:
        row = rows.setdefault(f.code, {"code": f.code, "name": f.name, "count": 0, "fixable": False})
        row["count"] += 1
        row["fixable"] = row["fixable"] or _fixable(f, unsafe)
    ordered = sorted(rows.values(), key=lambda r: (-r["count"], r["code"]))
    if fmt == "json":
        json.dump(ordered, out, indent=2)
        out.write("\n")
        return
    if not ordered:
        return
    width = max(len(str(r["count"])) for r in ordered)
    code_width = max(len(r["code"]) for r in ordered)
    for r in ordered:
        out.write(f"{str(r['count']).rjust(width)}  {r['code'].ljust(code_width)}  "
                  f"{'[*]' if r['fixable'] else '[ ]'} {r['name']}\n")


def apply_fixes_to_file(path: pathlib.Path, findings: list[Finding], config: Config, unsafe: bool,
                        problems: list[str], quiet: bool = False) -> list[Finding]:
    from .analysis import analyze_source
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
    if not quiet:
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
    """A rule's page: static rules by code or name, and the trace codes (GS900-) by code or name."""
    wanted = code.strip().upper()
    for rule in known_rules():
        if rule.code == wanted or rule.name == code.strip():
            sys.stdout.write(rule.docs_markdown())
            return EXIT_CLEAN
    sys.stderr.write(f"gradsight: error: no rule {code!r}; `gradsight rules` lists them\n")
    return EXIT_ERROR


def run_rules(fmt: str) -> int:
    """Every rule and trace code; text columns are as wide as their longest entry."""
    rules = known_rules()
    rows = [{"code": r.code, "name": r.name, "severity": r.severity.value, "summary": r.summary,
             "fix": bool(r.can_fix()), "family": r.family()} for r in rules]
    if fmt == "json":
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_CLEAN
    widths = {k: max([len(k)] + [len(str(r[k])) for r in rows]) for k in ("code", "name", "severity")}
    for r in rows:
        sys.stdout.write(f"{r['code'].ljust(widths['code'])}  {r['name'].ljust(widths['name'])}  "
                         f"{r['severity'].ljust(widths['severity'])}  {'fix' if r['fix'] else '   '}  {r['summary']}\n")
    return EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
