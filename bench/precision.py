"""How often gradsight warns on well-tested real-world PyTorch code (the corpus of bench/corpus.py).

    .venv/bin/python bench/precision.py               # run `gradsight check --output-format json --no-cache`
    .venv/bin/python bench/precision.py --cache       # let the CLI use its cache (faster re-runs)
    .venv/bin/python bench/precision.py --in-process  # call gradsight.analysis.analyze_source directly
    .venv/bin/python bench/precision.py --training    # the training-code corpus (bench/corpus.py --training)

The corpus is mature library code (timm, transformers, pytorch-lightning, torchvision, torch.nn /
optim / distributions), so nearly every warning or error on it is a false alarm until someone has
read the code and shown otherwise. The target is at most 1 warning-or-error finding per 50,000
lines. This prints every warning/error finding grouped by code (information and hint findings are
counted, not listed), the rate per 50,000 lines overall and per project, and writes a
machine-readable summary to bench/.cache/precision.json. Judge each finding in docs/precision.md.

Exit status: 0 when the run worked (whatever the counts), 2 when gradsight could not be run.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import pathlib
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import corpus  # noqa: E402

REPO = corpus.BENCH.parent
OUT = corpus.CACHE / "precision.json"
PER = 50_000
TARGET = 1.0  # warning-or-error findings per 50,000 lines
LOUD = ("warning", "error")


def run_cli(files: list[str], use_cache: bool) -> tuple[list[dict], str]:
    cmd = [*corpus.gradsight_command(), "check", "--output-format", "json"]
    if not use_cache:
        cmd.append("--no-cache")
    proc = subprocess.run([*cmd, *files], capture_output=True, text=True, cwd=REPO)
    # A working run prints a JSON list (`[]` when clean); an empty output (a crash before printing, e.g. a
    # traceback with exit 1) must not be read as "no findings".
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        raise SystemExit(f"gradsight check did not print JSON (exit {proc.returncode}):\n"
                         f"{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}")
    if not isinstance(data, list):
        raise SystemExit(f"gradsight check printed {type(data).__name__}, expected a list of findings")
    if proc.returncode not in (0, 1) and not data:
        raise SystemExit(f"gradsight check failed (exit {proc.returncode}):\n{proc.stderr[-1500:]}")
    return data, " ".join(cmd)


def run_in_process(files: list[str]) -> tuple[list[dict], str]:
    corpus.reexec_in_project_venv()
    from gradsight.analysis import analyze_source
    from gradsight.analysis import read_source

    out = []
    for f in files:
        # The CLI's reader: PEP 263 cookies and a UTF-8 BOM are honoured (stylegan2-ada's files start with one).
        text, _ = read_source(REPO / f)
        if text is None:
            continue
        for finding in analyze_source(text, f).findings:
            out.append(finding.to_json())
    return out, "gradsight.analysis.analyze_source (in-process)"


def _rel(path: str, root: pathlib.Path = corpus.CORPUS) -> str:
    p = pathlib.Path(path)
    if not p.is_absolute():
        p = REPO / p
    try:
        return str(p.resolve().relative_to(root))
    except ValueError:
        return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", action="store_true", help="let `gradsight check` use its cache")
    ap.add_argument("--in-process", action="store_true",
                    help="call gradsight.analysis.analyze_source instead of the CLI")
    ap.add_argument("--project", help="only this corpus project")
    ap.add_argument("--training", action="store_true",
                    help="run on the training-code corpus (pinned git commits) instead of the library corpus")
    ap.add_argument("--mirrors", type=pathlib.Path, help="local git mirrors for the training corpus (see corpus.py)")
    ap.add_argument("--all-severities", action="store_true", help="also list information and hint findings")
    ap.add_argument("--output", type=pathlib.Path, default=OUT, help=f"summary JSON (default {OUT.relative_to(REPO)})")
    args = ap.parse_args(argv)

    if args.training:
        corpus.ensure_training_corpus(mirrors=args.mirrors, quiet=True)
        paths = corpus.training_files(args.project)
        project_of = corpus.training_project_of
        root = corpus.TRAINING_DIR
        if args.output == OUT:
            args.output = corpus.CACHE / "precision-training.json"
    else:
        corpus.ensure_corpus(quiet=True)
        paths = corpus.corpus_files(args.project)
        project_of = corpus.project_of
        root = corpus.CORPUS
    files = [os.path.relpath(p, REPO) for p in paths]
    lines_by_project: collections.Counter[str] = collections.Counter()
    for p in paths:
        lines_by_project[project_of(p)] += corpus.count_lines(p)
    total_lines = sum(lines_by_project.values())

    t0 = time.perf_counter()
    if args.in_process:
        findings, how = run_in_process(files)
    else:
        probe = subprocess.run([*corpus.gradsight_command(), "check", "--help"], capture_output=True, text=True,
                               cwd=REPO)
        if probe.returncode != 0:
            print("`gradsight check` is not available: "
                  + ((probe.stderr or probe.stdout).strip().splitlines() or ["?"])[-1]
                  + "\n(use --in-process to call the engine directly)", file=sys.stderr)
            return 2
        findings, how = run_cli(files, args.cache)
    elapsed = time.perf_counter() - t0

    for f in findings:
        f["corpus_path"] = _rel(f.get("path", "?"), root)
        f["project"] = f["corpus_path"].split("/", 1)[0]
    loud = [f for f in findings if f.get("severity") in LOUD]
    shown = findings if args.all_severities else loud
    by_code: dict[str, list[dict]] = collections.defaultdict(list)
    for f in shown:
        by_code[f.get("code", "?")].append(f)

    print(f"gradsight precision on the {'training' if args.training else 'library'} corpus · {how} · {elapsed:.1f} s")
    print(f"{len(files)} files, {total_lines:,} lines · {len(findings)} findings, {len(loud)} warning-or-error")
    print()
    for code in sorted(by_code, key=lambda c: (-len(by_code[c]), c)):
        items = sorted(by_code[code], key=lambda f: (f["corpus_path"], f.get("line", 0), f.get("column", 0)))
        name = items[0].get("name", "")
        print(f"== {code} {name} ({len(items)})")
        for f in items:
            print(f"  {f['corpus_path']}:{f.get('line')}:{f.get('column')}: {f.get('severity')}: {f.get('message')}")
        print()

    sev_counts = collections.Counter(f.get("severity") for f in findings)
    loud_by_project = collections.Counter(f["project"] for f in loud)
    loud_by_code = collections.Counter(f.get("code") for f in loud)
    rate = len(loud) / total_lines * PER if total_lines else 0.0
    print(f"{'project':<20} {'lines':>9} {'warn+err':>9} {'per 50k lines':>14}")
    for proj, n in lines_by_project.items():
        k = loud_by_project.get(proj, 0)
        print(f"{proj:<20} {n:>9,} {k:>9} {k / n * PER if n else 0:>14.2f}")
    print(f"{'total':<20} {total_lines:>9,} {len(loud):>9} {rate:>14.2f}")
    print()
    print("by severity: " + ", ".join(f"{s} {sev_counts.get(s, 0)}" for s in ("error", "warning", "information", "hint")))
    print("warning-or-error by code: " + (", ".join(f"{c} {n}" for c, n in loud_by_code.most_common()) or "none"))
    print(f"target: <= {TARGET:g} warning-or-error per {PER:,} lines -> measured {rate:.2f}: "
          f"{'met' if rate <= TARGET else 'NOT met'}")

    summary = {
        "date": datetime.date.today().isoformat(),
        "how": how,
        "elapsed_s": round(elapsed, 2),
        "files": len(files),
        "lines": total_lines,
        "lines_by_project": dict(lines_by_project),
        "findings": len(findings),
        "by_severity": dict(sev_counts),
        "warning_or_error": len(loud),
        "warning_or_error_by_code": dict(loud_by_code),
        "warning_or_error_by_project": dict(loud_by_project),
        "per_50k_lines": round(rate, 3),
        "target_per_50k_lines": TARGET,
        "target_met": rate <= TARGET,
        "loud_findings": [{k: f.get(k) for k in ("corpus_path", "line", "column", "code", "name", "severity",
                                                  "message")} for f in loud],
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"summary written to {os.path.relpath(args.output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
