"""Benchmark `gradsight check` against ruff, TorchFix, torch-preflight and a bare `ast.parse` floor.

    .venv/bin/python bench/bench_check.py            # the whole corpus (a few minutes on 2 cores)
    .venv/bin/python bench/bench_check.py --quick    # 50 files spread over the corpus, a smoke run

One run measures, on exactly the same files (the corpus from bench/corpus.py):

* `gradsight check --no-cache` (cold), then `gradsight check` twice: the first fills the cache
  (any `.gradsight_cache` is removed beforehand), the second reads it (warm);
* `ruff check --select ALL --no-cache --isolated`, `torchfix --select ALL`, `torch-preflight check`
  (each from a separate venv, bench/.cache/venv, that this script creates; a tool that cannot be
  installed is skipped with a note);
* `python -c "ast.parse every file"`: the floor any Python-source tool pays;
* per-file latency of the engine in-process: `gradsight.analysis.analyze_source(text, path)` on each
  file, reported as p50/p90/p99/max.

Wall time comes from a monotonic clock; CPU time (user+sys) and peak RSS come from `os.wait4` on
each tool's process, which includes the children it waited for (TorchFix and torch-preflight fork
workers: their CPU is summed; peak RSS is that of the largest single process). The tools run one
after another, never in parallel. This prints numbers; it asserts nothing about them.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import corpus  # noqa: E402

REPO = corpus.BENCH.parent
BENCH_VENV = corpus.CACHE / "venv"
BASELINE_PACKAGES = (  # (pip requirement, console script)
    ("ruff", "ruff"),
    ("torchfix==0.7.*", "torchfix"),
    ("torch-preflight", "torch-preflight"),
)


@dataclass
class Result:
    name: str
    command: str
    wall: float | None = None
    cpu: float | None = None
    rss_mib: float | None = None
    rc: int | None = None
    findings: int | None = None
    note: str = ""


def _bin(venv: pathlib.Path, name: str) -> pathlib.Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / name


def ensure_bench_venv(log) -> tuple[dict[str, pathlib.Path], list[str]]:
    """Create bench/.cache/venv with the baseline tools; returns ({script: path}, notes)."""
    notes: list[str] = []
    if not _bin(BENCH_VENV, "python").exists():
        log(f"creating {BENCH_VENV.relative_to(REPO)} ...")
        subprocess.run([sys.executable, "-m", "venv", str(BENCH_VENV)], check=True)
    py = str(_bin(BENCH_VENV, "python"))
    tools: dict[str, pathlib.Path] = {}
    for req, script in BASELINE_PACKAGES:
        exe = _bin(BENCH_VENV, script)
        if not exe.exists():
            dist = re.split(r"[=<>!~]", req)[0]
            idx = subprocess.run([py, "-m", "pip", "index", "versions", dist, "--disable-pip-version-check"],
                                 capture_output=True, text=True)
            if idx.returncode != 0 or "Available versions" not in idx.stdout:
                notes.append(f"{dist}: not found on the package index; skipped")
                continue
            log(f"installing {req} into the bench venv ...")
            inst = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", req],
                                  capture_output=True, text=True)
            if inst.returncode != 0 or not exe.exists():
                tail = (inst.stderr or inst.stdout).strip().splitlines()[-1:] or ["?"]
                notes.append(f"{req}: could not be installed ({tail[0]}); skipped")
                continue
        tools[script] = exe
    return tools, notes


def tool_version(exe: pathlib.Path) -> str:
    try:
        out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "?"


def measure(name: str, argv: list[str], timeout: float, count=None, cwd: pathlib.Path = REPO,
            env: dict | None = None) -> Result:
    """Run argv once; wall from perf_counter, CPU and peak RSS from os.wait4 (this process's child only)."""
    shown = " ".join(argv[:6]) + (f" ... ({len(argv) - 6} more args)" if len(argv) > 6 else "")
    res = Result(name, shown)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=cwd, env=env,
                                    start_new_session=True)  # its own process group: a kill takes its workers too
        except OSError as exc:
            res.note = f"could not start: {exc}"
            return res
        deadline = t0 + timeout
        status = ru = None
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                try:
                    os.killpg(proc.pid, 9)
                except OSError:
                    proc.kill()
                _, status, ru = os.wait4(proc.pid, 0)
                res.note = f"killed after {timeout:.0f} s (CPU and RSS cover the main process only)"
                break
            time.sleep(0.005)
        res.wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        res.rc = proc.returncode
        res.cpu = ru.ru_utime + ru.ru_stime
        res.rss_mib = ru.ru_maxrss / 1024  # KiB on Linux
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    if count is not None:
        try:
            res.findings = count(stdout)
        except Exception as exc:  # noqa: BLE001 -- a benchmark keeps going
            res.note = (res.note + f"; could not count findings ({exc.__class__.__name__})").strip("; ")
    if res.rc not in (0, 1) and not res.note:
        tail = (stderr.strip() or stdout.strip()).splitlines()[-1:] or [""]
        res.note = f"exit {res.rc}: {tail[0][:160]}"
    return res


def _count_json_list(stdout: str) -> int:
    data = json.loads(stdout) if stdout.strip() else []
    if isinstance(data, dict):  # {"findings": [...]} or {"diagnostics": [...]} shapes
        for key in ("findings", "diagnostics", "results", "issues"):
            if isinstance(data.get(key), list):
                return len(data[key])
        raise ValueError("unknown JSON shape")
    return len(data)


def _count_lines_with_code(stdout: str) -> int:
    return sum(1 for line in stdout.splitlines() if re.match(r".+:\d+:\d+:? [A-Z]+\d+", line))


def clear_gradsight_caches(files: list[str]) -> list[pathlib.Path]:
    """Remove every `.gradsight_cache` the CLI could use for these files (cwd, repo, corpus folders)."""
    removed = []
    candidates = {REPO / ".gradsight_cache", corpus.CORPUS / ".gradsight_cache", corpus.BENCH / ".gradsight_cache"}
    for p in corpus.PROJECTS:
        candidates.add(corpus.CORPUS / p.name / ".gradsight_cache")
    for c in candidates:
        if c.is_dir():
            shutil.rmtree(c, ignore_errors=True)
            removed.append(c)
    return removed


def select_files(files: list[pathlib.Path], quick: int | None) -> list[pathlib.Path]:
    if not quick or quick >= len(files):
        return files
    step = len(files) / quick
    return [files[int(i * step)] for i in range(quick)]


def percentile(sorted_vals: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_vals:
        return float("nan")
    k = max(0, min(len(sorted_vals) - 1, int(round(q / 100 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[k]


def engine_latency(files: list[pathlib.Path]) -> dict:
    """Time analyze_source on each file in this process (after one warm-up call)."""
    from gradsight.analysis import analyze_source  # lazily: the CLI comparison must not pay for it

    texts = [(p, p.read_text(encoding="utf-8", errors="replace")) for p in files]
    analyze_source(texts[0][1], str(texts[0][0]))  # warm-up: imports, rule registry, caches
    rows = []
    for p, text in texts:
        t0 = time.perf_counter()
        analysis = analyze_source(text, str(p))
        dt = time.perf_counter() - t0
        rows.append((dt, p, text.count("\n") + 1, len(analysis.findings)))
    ms = sorted(r[0] * 1000 for r in rows)
    total_lines = sum(r[2] for r in rows)
    return {
        "files": len(rows),
        "p50": percentile(ms, 50), "p90": percentile(ms, 90), "p99": percentile(ms, 99), "max": ms[-1],
        "mean": statistics.fmean(ms), "total_s": sum(ms) / 1000,
        "ms_per_kloc": sum(ms) / (total_lines / 1000),
        "slowest": [(round(r[0] * 1000, 1), os.path.relpath(r[1], REPO), r[2]) for r in sorted(rows, reverse=True)[:5]],
    }


def _fmt(v, spec: str, dash: str = "-") -> str:
    return dash if v is None else format(v, spec)


def print_table(results: list[Result], lines: int, files: int) -> None:
    base = next((r for r in results if r.name == "gradsight (cold, --no-cache)" and r.wall), None)
    hdr = f"{'tool':<34} {'wall s':>8} {'CPU s':>8} {'RSS MiB':>8} {'kLOC/s':>8} {'findings':>9} {'÷ gradsight':>11}  note"
    print(hdr)
    print("-" * len(hdr))
    for r in results:
        kloc = (lines / 1000 / r.wall) if r.wall else None
        rel = (r.wall / base.wall) if (base and r.wall) else None
        print(f"{r.name:<34} {_fmt(r.wall, '8.2f'):>8} {_fmt(r.cpu, '8.2f'):>8} {_fmt(r.rss_mib, '8.0f'):>8} "
              f"{_fmt(kloc, '8.1f'):>8} {_fmt(r.findings, '9d'):>9} {_fmt(rel, '10.2f') + 'x' if rel else '-':>11}  "
              f"{r.note}")


def main(argv: list[str] | None = None) -> int:
    corpus.reexec_in_project_venv()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", nargs="?", type=int, const=50, default=None, metavar="N",
                    help="use N files spread over the corpus (default 50) for a smoke run")
    ap.add_argument("--no-baselines", action="store_true", help="skip ruff, TorchFix and torch-preflight")
    ap.add_argument("--tools", default="gradsight,ruff,torchfix,torch-preflight,ast",
                    help="comma-separated subset of gradsight,ruff,torchfix,torch-preflight,ast to run (default: all)")
    ap.add_argument("--no-latency", action="store_true", help="skip the in-process per-file latency")
    ap.add_argument("--timeout", type=float, default=1800,
                    help="seconds before a tool run is killed (default 1800)")
    ap.add_argument("--json", type=pathlib.Path, help="also write the results to this JSON file")
    args = ap.parse_args(argv)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731

    sizes = corpus.ensure_corpus(quiet=False)
    files = select_files(corpus.corpus_files(), args.quick)
    rel = [os.path.relpath(p, REPO) for p in files]
    lines = sum(corpus.count_lines(p) for p in files)
    wanted = {t.strip() for t in args.tools.split(",") if t.strip()}
    tools, notes = ({}, []) if args.no_baselines or not (wanted & {"ruff", "torchfix", "torch-preflight"}) \
        else ensure_bench_venv(log)
    tools = {k: v for k, v in tools.items() if k in wanted}

    gs = corpus.gradsight_command()
    print(f"gradsight benchmark · {datetime.date.today().isoformat()} · {platform.node() or '?'} · "
          f"{os.cpu_count()} CPUs · Python {platform.python_version()}")
    print(f"corpus: {len(files)} files, {lines:,} lines"
          + (f" (--quick subset of {sum(f for f, _ in sizes.values())} files)" if args.quick else ""))
    for name, exe in tools.items():
        print(f"  {name}: {tool_version(exe)}")
    print()

    results: list[Result] = []
    gs_ok = True
    probe = subprocess.run([*gs, "check", "--help"], capture_output=True, text=True, cwd=REPO)
    if probe.returncode != 0:
        gs_ok = False
        notes.append("`gradsight check` is not available yet: " + ((probe.stderr or probe.stdout).strip()
                                                                    .splitlines() or ["?"])[-1][:160])
    def sources_stamp() -> float:
        import gradsight
        root = pathlib.Path(gradsight.__file__).resolve().parent
        files = [*root.rglob("*.py"), *root.rglob("*.json")]
        return max((p.stat().st_mtime for p in files if "__pycache__" not in p.parts), default=0.0)

    if gs_ok and "gradsight" in wanted:
        stamp = sources_stamp()
        log("gradsight check --no-cache (cold) ...")
        results.append(measure("gradsight (cold, --no-cache)",
                               [*gs, "check", "--no-cache", "--output-format", "json", *rel], args.timeout,
                               _count_json_list))
        removed = clear_gradsight_caches(rel)
        log("gradsight check (cache fill) ..." + (f" [removed {len(removed)} old cache dir(s)]" if removed else ""))
        results.append(measure("gradsight (cache fill)", [*gs, "check", "--output-format", "json", *rel],
                               args.timeout, _count_json_list))
        log("gradsight check (warm cache) ...")
        results.append(measure("gradsight (warm cache)", [*gs, "check", "--output-format", "json", *rel],
                               args.timeout, _count_json_list))
        if sources_stamp() != stamp:
            notes.append("gradsight's own files changed while it was being measured (the cache is keyed on "
                         "their mtimes): the cold/cache-fill/warm rows measured different code; run again")
    if "ruff" in tools:
        log("ruff ...")
        results.append(measure("ruff check --select ALL",
                               [str(tools["ruff"]), "check", "--select", "ALL", "--no-cache", "--isolated",
                                "--exit-zero", "--output-format", "concise", *rel], args.timeout,
                               _count_lines_with_code))
    if "torchfix" in tools:
        log("torchfix ...")
        results.append(measure("torchfix --select ALL", [str(tools["torchfix"]), "--select", "ALL", *rel],
                               args.timeout, _count_lines_with_code))
    if "torch-preflight" in tools:
        log("torch-preflight ...")
        results.append(measure("torch-preflight check",
                               [str(tools["torch-preflight"]), "check", "-f", "json", "--no-color", "--fail-on",
                                "error", *rel], args.timeout, _count_json_list))
    if "ast" in wanted:
        log("ast.parse floor ...")
        results.append(measure("python ast.parse (floor)",
                               [sys.executable, "-c", "import ast,sys\nfor f in sys.argv[1:]:\n"
                                "    ast.parse(open(f,'rb').read(), f)", *rel], args.timeout))

    print_table(results, lines, len(files))
    by = {r.name: r for r in results}
    cold, warm, ruff, tfx = (by.get("gradsight (cold, --no-cache)"), by.get("gradsight (warm cache)"),
                             by.get("ruff check --select ALL"), by.get("torchfix --select ALL"))
    print()
    if cold and cold.wall and ruff and ruff.wall:
        print(f"gradsight (cold) / ruff:      {cold.wall / ruff.wall:6.2f}x wall, "
              f"{cold.cpu / ruff.cpu if ruff.cpu else float('nan'):6.2f}x CPU")
    if cold and cold.wall and warm and warm.wall:
        print(f"gradsight cold / warm:        {cold.wall / warm.wall:6.2f}x wall")
    if cold and cold.wall and tfx and tfx.wall:
        print(f"torchfix / gradsight (cold):  {tfx.wall / cold.wall:6.2f}x wall, "
              f"{tfx.cpu / cold.cpu if cold.cpu else float('nan'):6.2f}x CPU")

    lat = None
    if not args.no_latency and "gradsight" in wanted:
        log("per-file engine latency (in-process) ...")
        try:
            lat = engine_latency(files)
        except ImportError as exc:
            notes.append(f"per-file latency skipped: {exc}")
    if lat:
        print()
        print(f"engine latency per file (analyze_source, in-process, {lat['files']} files): "
              f"p50 {lat['p50']:.1f} ms · p90 {lat['p90']:.1f} ms · p99 {lat['p99']:.1f} ms · "
              f"max {lat['max']:.1f} ms · {lat['ms_per_kloc']:.1f} ms per 1,000 lines")
        for ms, path, n in lat["slowest"]:
            print(f"  {ms:8.1f} ms  {path} ({n:,} lines)")
    if notes:
        print()
        for n in notes:
            print(f"note: {n}")
    if args.json:
        args.json.write_text(json.dumps({
            "date": datetime.date.today().isoformat(), "cpus": os.cpu_count(), "files": len(files), "lines": lines,
            "results": [r.__dict__ for r in results], "latency": lat, "notes": notes}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
