"""Replay a typing session on timm's vision_transformer.py in-process and time `analyze_source` per keystroke.

Types a few new lines inside `VisionTransformer.forward` character by character (with Enter between lines), then
deletes them again with Backspace, analysing after every keystroke as the language server does. Prints p50/p90/max
per-keystroke times (and p50/max over the keystrokes whose text does not parse), how many keystrokes took the
spliced parse, a full parse or the chunked parse of syntax-error recovery, how many cached definition results were
moved, and the ratio to a cold analysis of the same file.

    .venv/bin/python bench/bench_typing.py                 # the incremental engine
    GRADSIGHT_NO_SHIFT=1 .venv/bin/python bench/bench_typing.py   # without moving results across line shifts
    GRADSIGHT_NO_RECOVER=1 .venv/bin/python bench/bench_typing.py # syntax errors: analyse the prefix that parses
    .venv/bin/python bench/bench_typing.py --compare       # all three, in one run (the others in subprocesses)
    .venv/bin/python bench/bench_typing.py --as-server     # rules imported and frozen before the first analysis
"""

from __future__ import annotations

import gc
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from gradsight.analysis import ENGINE, RULES  # noqa: E402
from gradsight.analysis import analyze_source  # noqa: E402
from keystroke_texts import typing_versions as keystrokes  # noqa: E402 (bench/ is the script's folder)

FILE = ROOT / "bench" / ".corpus" / "timm" / "timm" / "models" / "vision_transformer.py"


def run(as_server: bool = False) -> dict:
    """`cold` is the process' first analysis, the rule modules' import included (`ProjectRules` imports them
    inside it; where no bytecode was written, `PYTHONDONTWRITEBYTECODE=1`, that is byte-compiling ~100 modules),
    `rules_ms` that import alone. `as_server`: import the rules and freeze the loaded modules before the first
    analysis, as the language server's warm-up does after `initialize` (`Session.warm_up`); `cold` is then the
    first analysis alone."""
    text = FILE.read_text()
    path = str(FILE)
    engine = ENGINE
    engine.clear()
    t = time.perf_counter()
    RULES._all()
    rules = time.perf_counter() - t
    if as_server:
        gc.freeze()
        t = time.perf_counter()
    analyze_source(text, path)
    cold = time.perf_counter() - t
    engine.reset_stats()
    times = []
    broken = []
    for version in keystrokes(text):
        t = time.perf_counter()
        analysis = analyze_source(version, path)
        times.append(time.perf_counter() - t)
        if any(f.code == "GS001" for f in analysis.findings):
            broken.append(times[-1])
    times.sort()
    broken.sort()
    q = statistics.quantiles(times, n=10)
    return {"shift": engine.shift, "recover": engine.recover, "keystrokes": len(times), "cold_ms": cold * 1e3,
            "rules_ms": rules * 1e3, "as_server": as_server,
            "p50_ms": q[4] * 1e3, "p90_ms": q[8] * 1e3, "max_ms": times[-1] * 1e3, "ratio_p50": q[4] / cold,
            "broken": len(broken), "broken_p50_ms": statistics.median(broken) * 1e3 if broken else 0.0,
            "broken_max_ms": broken[-1] * 1e3 if broken else 0.0, **engine.stats}


def show(r: dict) -> None:
    if not r["recover"]:
        label = "GRADSIGHT_NO_RECOVER=1 (syntax errors: prefix analysis)"
    else:
        label = "incremental (line shifts moved)" if r["shift"] else "GRADSIGHT_NO_SHIFT=1 (full parse on line shifts)"
    print(f"{label}: {r['keystrokes']} keystrokes; p50 {r['p50_ms']:.1f} ms, p90 {r['p90_ms']:.1f} ms, "
          f"max {r['max_ms']:.1f} ms; {r['broken']} that do not parse: p50 {r['broken_p50_ms']:.1f} ms, "
          f"max {r['broken_max_ms']:.1f} ms; cold {r['cold_ms']:.0f} ms (p50/cold {r['ratio_p50']:.3f}; "
          f"{'after' if r['as_server'] else 'with'} the rules' import, {r['rules_ms']:.0f} ms); "
          f"parses spliced {r['spliced']}, full {r['parsed']}, chunked {r['chunked']}; cached results moved "
          f"{r['moved']}, not movable {r['not_moved']}", flush=True)


if __name__ == "__main__":
    if not FILE.is_file():
        sys.exit(f"{FILE} is missing: fetch the corpus first (bench/corpus.py)")
    sys.setrecursionlimit(10000)
    show(run(as_server="--as-server" in sys.argv))
    if "--compare" in sys.argv:
        for var in ("GRADSIGHT_NO_RECOVER", "GRADSIGHT_NO_SHIFT"):
            env = dict(os.environ, **{var: "1"})
            subprocess.run([sys.executable, __file__], env=env, check=False)
