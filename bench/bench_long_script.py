"""A long single-file RL script against the corpus' average time per line (docs/performance.md, issue #12).

Generates `bench/gen_rl_script.py N` (default 24 variants, ~3k lines), then analyses it and 40 corpus files
(a fixed random sample, seed 1) cold, each in the same process with a fresh `Engine`, and prints CPU time per
line for both and their ratio (target: the RL script no slower per line than the corpus). Rounds interleave the
two so that a noisy machine affects both alike; the best round of each is reported. Never asserts.

Run: .venv/bin/python bench/bench_long_script.py [--variants 24] [--rounds 3]
"""

from __future__ import annotations

import argparse
import pathlib
import random
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402

corpus.reexec_in_project_venv()

from gradsight.analysis import RULES  # noqa: E402
from gradsight.engine.engine import Engine  # noqa: E402


def cpu_per_line(items: list[tuple[str, str]]) -> tuple[float, int]:
    total = 0.0
    lines = 0
    for path, text in items:
        engine = Engine()
        t = time.process_time()
        engine.analyze(text, path, None, None, rules=RULES)
        total += time.process_time() - t
        lines += text.count("\n") + 1
    return total, lines


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    corpus.ensure_corpus(quiet=True)
    rl = subprocess.run([sys.executable, str(HERE / "gen_rl_script.py"), str(args.variants)], check=True,
                        capture_output=True, text=True).stdout
    files = sorted(corpus.corpus_files())
    sample = random.Random(1).sample(files, 40)
    corpus_items = [(str(p), p.read_text(encoding="utf-8", errors="replace")) for p in sample]
    rl_items = [("rl_script.py", rl)]
    # Warm imports and lazily built tables once, outside the measured rounds.
    cpu_per_line(rl_items[:1])
    best_rl = best_corpus = None
    for r in range(args.rounds):
        rl_t, rl_lines = cpu_per_line(rl_items)
        c_t, c_lines = cpu_per_line(corpus_items)
        rl_us, c_us = rl_t / rl_lines * 1e6, c_t / c_lines * 1e6
        print(f"round {r + 1}: RL script {rl_lines} lines {rl_t:.2f} s {rl_us:.0f} us/line; "
              f"corpus {len(corpus_items)} files {c_lines} lines {c_t:.2f} s {c_us:.0f} us/line; "
              f"ratio {rl_us / c_us:.2f}x")
        best_rl = rl_us if best_rl is None else min(best_rl, rl_us)
        best_corpus = c_us if best_corpus is None else min(best_corpus, c_us)
    print(f"best: RL {best_rl:.0f} us/line, corpus {best_corpus:.0f} us/line, ratio {best_rl / best_corpus:.2f}x "
          f"(target <= 1x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
