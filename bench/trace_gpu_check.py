"""Does `gradsight trace` find the same things on a GPU as on the CPU? Run on a machine with CUDA.

Usage:  python bench/trace_gpu_check.py [--out FILE.json] [DIR_OR_FILE ...]

Each script (default: tests/trace/scripts, tests/trace/corpus, tests/fixtures/seed_cases) is traced twice in
child processes, as `gradsight trace` would: once as written with ``device="cpu"``, once as a copy whose first
line is ``import torch; torch.set_default_device("cuda")`` with ``device="cuda"`` (factory calls and modules built
after it live on the GPU; lines are shifted back by one before comparing). It prints, per script, whether the
findings (code, line, severity, related lines), the error type and the stop reason agree, and the events'
devices seen on the GPU run; exit status 1 when any script differs unexpectedly (an expected difference: a script's
own `.numpy()` on what is now a CUDA tensor fails with torch's device error first). Needs CUDA; exits 2 without.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from gradsight.trace import run_traces  # noqa: E402

DEFAULT = [ROOT / "tests/trace/scripts", ROOT / "tests/trace/corpus", ROOT / "tests/fixtures/seed_cases"]
HEADER = 'import torch; torch.set_default_device("cuda")\n'


def scripts(args):
    out = []
    for a in args or DEFAULT:
        p = pathlib.Path(a).resolve()
        out += sorted(p.glob("*.py")) if p.is_dir() else [p]
    return out


def summary(result, shift):
    def line(n):
        return n - shift if isinstance(n, int) else n

    found = sorted((f["code"], line(f["line"]), f["severity"],
                    tuple(sorted(line(r.get("line")) for r in f.get("related") or [] if r.get("line"))))
                   for f in result["findings"])
    err = result["error"]["type"] if result["error"] else None
    return {"findings": found, "error": err, "stopped": result["stopped"]}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--out")
    ap.add_argument("--max-steps", type=int, default=3)
    args = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("CUDA is not available", file=sys.stderr)
        return 2
    files = scripts(args.paths)
    with tempfile.TemporaryDirectory() as tmp:
        copies = []
        for f in files:
            # The same folder name, and the script's siblings beside it, so sibling imports still resolve.
            c = pathlib.Path(tmp) / f.parent.name / f.name
            c.parent.mkdir(exist_ok=True)
            c.write_text(HEADER + f.read_text())
            for sib in f.parent.glob("*.py"):
                if sib != f and not (c.parent / sib.name).exists():
                    (c.parent / sib.name).write_text(sib.read_text())
            copies.append(c)
        cpu = run_traces([str(f) for f in files], device="cpu", max_steps=args.max_steps, timeout=900)
        gpu = run_traces([str(c) for c in copies], device="cuda", max_steps=args.max_steps, timeout=900)
    rows, differ, expected = [], 0, 0
    for f, a, b in zip(files, cpu, gpu):
        sa, sb = summary(a, 0), summary(b, 1)
        same = sa == sb
        # `.numpy()` on a CUDA tensor raises torch's device TypeError before its requires-grad check: on a GPU
        # that is the script's real error, and the trace reports it (GS900) instead of GS907.
        why = None
        if not same and b["error"] and "can't convert cuda" in str(b["error"].get("message", "")):
            why, same = "the script's own .numpy() on a CUDA tensor fails first (torch's device error)", True
            expected += 1
        differ += not same
        devices = sorted({e["device"] for e in b["events"] if e.get("device")})
        rows.append({"script": str(f.relative_to(ROOT)), "same": same, "expected_difference": why, "cpu": sa,
                     "cuda": sb, "cuda_devices": devices, "cuda_error": b["error"],
                     "cuda_internal_errors": b.get("internal_errors")})
        mark = "diff, expected:" if why else "same" if same else "DIFF"
        print(f"{mark:4} {f.relative_to(ROOT)}  cpu={sa['findings'] or '-'} {sa['error'] or ''}  "
              f"devices={devices}")
        if why or not same:
            note = f"  ({why})" if why else ""
            print(f"     cuda={sb['findings'] or '-'} {sb['error'] or ''} stopped={sb['stopped']}{note}")
            if b["error"]:
                print("     " + str(b["error"].get("message", ""))[:300])
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}: {len(files) - differ - expected} same, "
          f"{expected} differ as expected, {differ} differ")
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(rows, indent=1, default=str))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
