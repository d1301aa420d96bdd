"""`gradsight check` over every .py file of the installed torch package, timed, beside TorchFix.

    python bench/bench_torch_package.py                  # gradsight only
    python bench/bench_torch_package.py --with-torchfix  # also TorchFix on the same files (slow: tens of minutes)

Prints files, lines, wall/CPU seconds and findings per tool, and the ratio. A benchmark, not a test:
it asserts nothing. TorchFix comes from the bench venv that bench/bench_check.py creates
(bench/.cache/venv); when it is missing, the script says so and skips it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import pathlib
import resource
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH_VENV = ROOT / "bench" / ".cache" / "venv"


def run(argv: list[str], timeout: float) -> tuple[float, float, str, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        out, rc = proc.stdout, proc.returncode
    except subprocess.TimeoutExpired:
        out, rc = "", -1
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out, rc


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--with-torchfix", action="store_true")
    ap.add_argument("--timeout", type=float, default=7200)
    args = ap.parse_args()
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        print("torch is not installed in this interpreter")
        return 2
    pkg = pathlib.Path(spec.origin).parent
    files = sorted(str(p) for p in pkg.rglob("*.py"))
    lines = sum(len(pathlib.Path(f).read_bytes().splitlines()) for f in files)
    print(f"torch package: {pkg}\n{len(files)} files, {lines:,} lines\n")
    rows = []
    wall, cpu, out, rc = run([sys.executable, "-m", "gradsight", "check", "--no-cache", "--exit-zero",
                              "--output-format", "json", str(pkg)], args.timeout)
    try:
        findings = len(json.loads(out))
    except ValueError:
        findings = "?"
    rows.append(("gradsight check --no-cache", wall, cpu, findings, rc))
    if args.with_torchfix:
        torchfix = BENCH_VENV / "bin" / "torchfix"
        if torchfix.exists():
            wall, cpu, out, rc = run([str(torchfix), "--select", "ALL", str(pkg)], args.timeout)
            rows.append(("torchfix --select ALL", wall, cpu, out.count("\n"), rc))
        else:
            print(f"TorchFix not found at {torchfix}: run bench/bench_check.py once to create the bench venv\n")
    print(f"{'tool':<32} {'wall s':>9} {'CPU s':>9} {'findings':>9} {'exit':>5}")
    for name, wall, cpu, n, rc in rows:
        print(f"{name:<32} {wall:>9.1f} {cpu:>9.1f} {n!s:>9} {rc:>5}")
    if len(rows) == 2:
        print(f"\nTorchFix / gradsight wall time: {rows[1][1] / rows[0][1]:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
