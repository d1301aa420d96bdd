"""Deterministic keystroke counts: cProfile function calls of `bench_typing.py`'s and `bench_break_dict.py`'s
keystroke sequences (and the long RL script's cold analysis), plus a digest of every finding's and fact's `repr`
after each keystroke, so that two trees can be compared on a loaded machine (wall time means little there).

Run from a tree's root (e.g. one extracted with `git archive REV server bench`) with that tree's engine:

    PYTHONHASHSEED=0 PYTHONPATH=server python bench/keystroke_counts.py typing|break|long [--out F.json] [--repr F.txt]

Prints the total function calls (cold analysis apart from the keystrokes) and `Engine.stats`; `--out` writes the
per-function call counts, `--repr` every finding and fact of every step. Never asserts.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import pathlib
import pstats
import subprocess
import sys
import time

from keystroke_texts import break_versions, typing_versions  # bench/ is the script's folder

ROOT = pathlib.Path.cwd()
FILE = (ROOT / "bench" / ".corpus" / "timm" / "timm" / "models" / "vision_transformer.py").resolve()
TICK = 0.03  # seconds of the workspace's clock per analysis


def describe(a) -> str:
    return "\n".join([repr(f) for f in a.findings] + [repr(f) for f in a.facts])


PLAIN = False  # --plain: no profiler (for instruction counts under valgrind: `--skip-keys` gives the baseline)


def count(fn) -> tuple[int, pstats.Stats]:
    if PLAIN:
        t = time.process_time()
        fn()
        return round((time.process_time() - t) * 1000), None
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    st = pstats.Stats(prof)
    return st.total_calls, st


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["typing", "break", "long"])
    ap.add_argument("--out")
    ap.add_argument("--repr")
    ap.add_argument("--plain", action="store_true")
    ap.add_argument("--skip-keys", action="store_true")
    ap.add_argument("--freeze", action="store_true", help="gc.freeze() after the cold analysis (no full collections "
                    "over what it left)")
    args = ap.parse_args()
    global PLAIN
    PLAIN = args.plain
    sys.setrecursionlimit(10000)
    from gradsight.analysis import RULES
    from gradsight.engine.engine import Engine

    engine = Engine()
    # The workspace trusts import resolutions and file lists for a couple of seconds of `time.monotonic()`; under a
    # profiler on a loaded machine a keystroke takes long enough for them to expire at random. A fixed clock that
    # advances `TICK` seconds per analysis makes the counts repeatable (and models a quiet machine's keystrokes).
    import types

    import gradsight.engine.workspace as wsmod

    clock = [1000.0]
    wsmod.time = types.SimpleNamespace(monotonic=lambda: clock[0])
    real_analyze = engine.analyze

    def analyze(*a, **k):
        clock[0] += TICK
        return real_analyze(*a, **k)

    engine.analyze = analyze
    reprs: list[str] = []
    ws = None
    if args.mode == "long":
        path = "rl_script.py"
        text = subprocess.run([sys.executable, str(ROOT / "bench" / "gen_rl_script.py"), "24"], check=True,
                              capture_output=True, text=True).stdout
        versions: list[str] = []
    else:
        path = str(FILE)
        text = FILE.read_text()
        versions = list(typing_versions(text) if args.mode == "typing" else break_versions(text))
        if args.skip_keys:
            versions = []
        if args.mode == "break":
            from gradsight.engine.workspace import Workspace

            ws = Workspace(FILE.parents[2])
    if args.mode != "long":
        # imports and lazily built tables outside the counts (a throwaway engine)
        Engine().analyze("import torch\nx = torch.ones(2, requires_grad=True)\n", "warm.py", None, None, rules=RULES)
    out: dict = {}

    def cold():
        reprs.append(describe(engine.analyze(text, path, None, ws, rules=RULES)))

    cold_calls, cold_st = count(cold)
    engine.reset_stats()
    if args.freeze:
        import gc

        gc.collect()
        gc.freeze()

    each: list = []

    steady: list = []  # per-keystroke profiles after the first two (the steady state)

    def keys():
        for i, v in enumerate(versions):
            if args.plain:
                t = time.process_time()
                a = engine.analyze(v, path, None, ws, rules=RULES)
                each.append(round((time.process_time() - t) * 1000, 1))
            else:
                prof = cProfile.Profile()
                prof.enable()
                a = engine.analyze(v, path, None, ws, rules=RULES)
                prof.disable()
                st = pstats.Stats(prof)
                each.append(st.total_calls)
                if i >= 2:
                    steady.append(st)
            reprs.append(describe(a))

    import gc

    gcs = [0, 0, 0]
    gc_t = [0.0, None]

    def on_gc(phase, info):
        if phase == "start":
            gc_t[1] = time.process_time()
        else:
            gcs[info["generation"]] += 1
            gc_t[0] += time.process_time() - gc_t[1]

    gc.callbacks.append(on_gc)
    PLAIN, plain = True, PLAIN  # one profile per keystroke (in `keys`), not one around them all
    key_calls, _ = count(keys)
    PLAIN = plain
    if not PLAIN:
        key_calls = sum(each)
        key_st = steady[0] if steady else None
        for st in steady[1:]:
            key_st.add(st)
    gc.callbacks.remove(on_gc)
    live = len(gc.get_objects())
    digest = hashlib.sha1("\n\x00\n".join(reprs).encode()).hexdigest()[:16]
    unit = "CPU ms" if PLAIN else "calls"
    print(f"{args.mode}: cold {cold_calls:,} {unit}; {len(versions)} keystrokes {key_calls:,} {unit}; "
          f"gc {gcs} {gc_t[0] * 1000:.0f} ms, {live:,} objects; stats {engine.stats}; findings+facts digest {digest}", flush=True)
    if args.out and not PLAIN:
        st = key_st if versions else cold_st  # the keystrokes after the first two
        for (file, line, name), (cc, nc, tt, ct, callers) in st.stats.items():
            short = file.split("/gradsight/")[-1] if "/gradsight/" in file else file.rsplit("/", 1)[-1]
            out[f"{short}:{line}:{name}"] = nc
        pathlib.Path(args.out).write_text(json.dumps({"cold": cold_calls, "keys": key_calls, "stats": engine.stats,
                                                      "digest": digest, "calls": out}, indent=0))
    if args.mode == "break":
        print("per keystroke (break, restore, ...):", each)
    elif versions and not PLAIN:
        print(f"steady state (keystrokes 3-{len(versions)}): {sum(each[2:]):,} calls")
    if args.repr:
        pathlib.Path(args.repr).write_text("\n\x00\n".join(reprs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
