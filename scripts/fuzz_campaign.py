#!/usr/bin/env python3
"""gradsight's long fuzzing campaign for the analysis engine (docs/reliability.md).

    .venv/bin/python scripts/fuzz_campaign.py --minutes 10

For the given time it feeds `analyze_source`:

- every corpus file unchanged (the project's examples and seed cases, torch/nn/modules, torch/optim,
  and any --corpus directories), measuring CPU time against the budget 0.05 s + 2 ms per line;
- mutants of those files: random deletions, insertions (brackets, keywords, unicode, line separators,
  NUL, BOM...), truncations, swapped/duplicated/deleted lines, re-indented lines, changed line endings,
  renamed identifiers (gs_fuzz.MUTATORS);
- prefixes of files, as when typing them character by character;
- programs from hypothesmith's grammar- and CST-based generators (--hypothesmith-share of the time);
- edit sequences, each version analysed warm (right after the previous one, caches full) and cold:
  the results must be identical (--edit-share of the time).

Each input must analyse without an exception, within a hang bound (default 20x the budget) and with
every finding, fix edit, related location and fact inside the text. Failures are de-duplicated by
signature, minimised and written to test-artifacts/fuzz/ (a .py file and a .txt report each).

Exit status: 0 when nothing failed, 1 otherwise. --record writes the summary into docs/reliability.md.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import random
import statistics
import sys
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "reliability"))

import gs_fuzz as g  # noqa: E402

DOC = ROOT / "docs" / "reliability.md"
BEGIN, END = "<!-- campaign:begin -->", "<!-- campaign:end -->"


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=10.0, help="how long to run (default 10)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: time-based; printed)")
    p.add_argument("--corpus", action="append", default=[], help="extra directories of .py files (recursive)")
    p.add_argument("--torch-glob", action="append", default=None,
                   help="globs under the installed torch package (default: nn/modules/*.py and optim/*.py)")
    p.add_argument("--max-mutant-lines", type=int, default=2500,
                   help="mutate only files up to this many lines (bigger ones are still analysed once)")
    p.add_argument("--hypothesmith-share", type=float, default=0.1,
                   help="share of the time for hypothesmith-generated programs (0 to skip)")
    p.add_argument("--prefix-share", type=float, default=0.15, help="share of the time for typing prefixes")
    p.add_argument("--edit-share", type=float, default=0.15,
                   help="share of the time for edit sequences analysed warm (after the previous version) and cold")
    p.add_argument("--hang-factor", type=float, default=g.HANG_FACTOR, help="a hang is this many times the budget")
    p.add_argument("--slow-factor", type=float, default=5.0,
                   help="report (not fail) inputs whose CPU time is over this many times the budget")
    p.add_argument("--out", type=pathlib.Path, default=ROOT / "test-artifacts" / "fuzz",
                   help="where minimised failures go")
    p.add_argument("--json", type=pathlib.Path, default=None, help="also write the summary as JSON here")
    p.add_argument("--record", action="store_true", help="write the summary into docs/reliability.md")
    p.add_argument("--quiet", action="store_true")
    return p.parse_args(argv)


class Campaign:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.seed = args.seed if args.seed is not None else int(time.time())
        self.rng = random.Random(self.seed)
        self.counts = {"files": 0, "mutants": 0, "prefixes": 0, "generated": 0, "edits": 0}
        self.failures: dict[str, g.Failure] = {}
        self.failure_counts: dict[str, int] = {}
        self.slow: list[tuple[float, str, int, float]] = []  # (ratio, what, lines, cpu)
        self.ms_per_line: list[float] = []
        self.worst: tuple[float, str, int, float] = (0.0, "", 0, 0.0)
        self.started = time.monotonic()

    def log(self, msg: str) -> None:
        if not self.args.quiet:
            print(msg, flush=True)

    # -- the corpus

    def corpus(self) -> list[pathlib.Path]:
        files = g.corpus_files(torch_globs=self.args.torch_glob or ("nn/modules/*.py", "optim/*.py"))
        for extra in self.args.corpus:
            files.extend(sorted(pathlib.Path(extra).rglob("*.py")))
        return files

    # -- one input

    def check(self, text: str, what: str, kind: str) -> None:
        self.counts[kind] += 1
        # Corpus files are timed cold; other inputs alternate between cold and warm (the per-definition cache
        # then re-analyses only what changed, as in an editor).
        cold = kind == "files" or self.rng.random() < 0.5
        result = g.run_checked(text, hang_factor=self.args.hang_factor, slow_factor=None, cold=cold)
        lines = g.line_count(text)
        ratio = result.cpu / g.budget_s(text)
        if ratio > self.worst[0]:
            self.worst = (ratio, what, lines, result.cpu)
        if kind == "files" and lines >= 50:
            self.ms_per_line.append(1000 * result.cpu / lines)
        if ratio > self.args.slow_factor and result.failure is None:
            self.slow.append((ratio, what, lines, result.cpu))
        if result.failure is not None:
            self.record(result.failure, what)

    def record(self, failure: g.Failure, what: str) -> None:
        sig = g.signature(failure)
        self.failure_counts[sig] = self.failure_counts.get(sig, 0) + 1
        if sig in self.failures:
            return
        self.log(f"  NEW FAILURE [{sig}] from {what}: {failure.summary()}")
        deadline = time.monotonic() + 60
        predicate = g.same_failure(sig, hang_factor=self.args.hang_factor)

        def still_fails(text: str) -> bool:
            return time.monotonic() < deadline and predicate(text)

        small = g.minimize(failure.text, still_fails) if failure.kind != "hang" else failure.text
        failure = g.Failure(failure.kind, failure.detail, small, failure.seconds)
        self.failures[sig] = failure
        out = self.args.out
        out.mkdir(parents=True, exist_ok=True)
        name = f"{failure.kind}-{len(self.failures):03d}"
        (out / f"{name}.py").write_text(small, encoding="utf-8", errors="surrogatepass")
        (out / f"{name}.txt").write_text(f"signature: {sig}\nfrom: {what}\nseed: {self.seed}\n\n{failure.detail}\n\n"
                                         f"minimised input (repr):\n{small!r}\n", encoding="utf-8", errors="replace")
        self.log(f"    minimised to {len(small)} characters: {small[:200]!r} -> {out / name}.py")

    # -- phases

    def time_left(self) -> float:
        return self.args.minutes * 60 - (time.monotonic() - self.started)

    def run(self) -> dict:
        warnings.simplefilter("ignore")  # ast.parse's SyntaxWarnings on mutants
        files = self.corpus()
        self.log(f"gradsight fuzz campaign: {len(files)} corpus files, {self.args.minutes:g} minutes, seed {self.seed}")
        g.analyze_source("import torch\n")  # imports and tables, outside the measurements
        texts: list[tuple[str, str]] = []
        for path in files:
            if self.time_left() <= 0:
                break
            text = g.read(path)
            self.check(text, str(path), "files")
            if g.line_count(text) <= self.args.max_mutant_lines:
                texts.append((path.name, text))
        self.log(f"  corpus analysed: {self.counts['files']} files, worst CPU/budget {self.worst[0]:.2f} "
                 f"({self.worst[1]})")
        if not texts:
            return self.summary()
        generated = self._generator() if self.args.hypothesmith_share > 0 else None
        shares = {"prefixes": self.args.prefix_share, "edits": self.args.edit_share,
                  "generated": self.args.hypothesmith_share if generated else 0.0}
        shares["mutants"] = max(0.05, 1.0 - sum(shares.values()))
        spent = {k: 0.0 for k in shares}
        small = [t for t in texts if len(t[1]) < 4000] or texts
        last_report = time.monotonic()
        while self.time_left() > 0:
            # Run the phase furthest behind its share of the time.
            phase = min((k for k in shares if shares[k] > 0), key=lambda k: spent[k] / shares[k])
            t0 = time.monotonic()
            if phase == "generated":
                generated()
            elif phase == "prefixes":
                name, text = self.rng.choice(small)
                if self.rng.random() < 0.5:
                    text = g.mutate(text, self.rng)
                step = self.rng.choice([1, 3, 7, 17])
                start = self.rng.randrange(0, max(1, len(text)))
                for end in range(start, min(len(text), start + 100 * step) + 1, step):
                    self.check(text[:end], f"prefix of {name} [:{end}]", "prefixes")
                    if self.time_left() <= 0:
                        break
            elif phase == "edits":
                self.edit_sequence(self.rng.choice(small))
            else:
                name, text = self.rng.choice(texts)
                self.check(g.mutate(text, self.rng), f"mutant of {name}", "mutants")
            spent[phase] += time.monotonic() - t0
            if time.monotonic() - last_report > 30:
                last_report = time.monotonic()
                self.log(f"  {int(time.monotonic() - self.started)}s: {self.counts} failures: {len(self.failures)}")
        return self.summary()

    def edit_sequence(self, named: tuple[str, str]) -> None:
        """Small edits one after the other, as typed: each analysed warm and cold, which must agree."""
        name, text = named
        edits = [g.m_delete, g.m_insert, g.m_swap_lines, g.m_dup_line, g.m_delete_lines, g.m_reindent,
                 g.m_insert_copy, g.m_unicode_names, g.m_line_endings]
        for step in range(self.rng.randint(1, 8)):
            edited = self.rng.choice(edits)(text, self.rng)
            self.counts["edits"] += 1
            try:
                problem = g.incremental_mismatch(text, edited, "edited.py")
            except Exception:  # noqa: BLE001 - analyze_source raised: the ordinary check reports it
                self.check(edited, f"edit {step} of {name}", "mutants")
                return
            if problem:
                sig = "incremental: " + problem.split(":")[0]
                self.failure_counts[sig] = self.failure_counts.get(sig, 0) + 1
                if sig not in self.failures:
                    self.failures[sig] = g.Failure("incremental", problem, edited)
                    out = self.args.out
                    out.mkdir(parents=True, exist_ok=True)
                    stem = out / f"incremental-{len(self.failures):03d}"
                    stem.with_suffix(".before.py").write_text(text, encoding="utf-8", errors="surrogatepass")
                    stem.with_suffix(".after.py").write_text(edited, encoding="utf-8", errors="surrogatepass")
                    self.log(f"  NEW FAILURE [{sig}] after an edit of {name}: {problem[:300]} -> {stem}.*.py")
                return
            text = edited

    def _generator(self):
        try:
            import hypothesmith
            from hypothesis import HealthCheck, Phase, given, seed, settings, strategies as st
        except ImportError:
            self.log("  hypothesmith is not installed; skipping generated programs")
            return None
        strategies = [hypothesmith.from_node(), hypothesmith.from_grammar()]

        def one_batch() -> None:
            strategy = self.rng.choice(strategies)
            deadline = time.monotonic() + 20

            @seed(self.rng.randrange(2 ** 32))
            @settings(max_examples=10, deadline=None, database=None, phases=[Phase.generate],
                      suppress_health_check=list(HealthCheck))
            @given(strategy)
            def batch(src):
                if time.monotonic() < deadline and self.time_left() > 0:
                    self.check(src, "hypothesmith program", "generated")

            try:
                batch()
            except Exception as exc:  # noqa: BLE001 - a generator problem is not a gradsight failure
                self.log(f"  hypothesmith batch stopped: {type(exc).__name__}: {str(exc)[:200]}")

        return one_batch

    def summary(self) -> dict:
        elapsed = time.monotonic() - self.started
        per_line = sorted(self.ms_per_line)
        return {
            "seed": self.seed,
            "minutes": round(elapsed / 60, 1),
            "files tried": self.counts["files"],
            "mutants tried": self.counts["mutants"],
            "prefixes tried": self.counts["prefixes"],
            "generated programs": self.counts["generated"],
            "edits (warm vs cold)": self.counts["edits"],
            "failures found": len(self.failures),
            "failure signatures": {k: self.failure_counts[k] for k in self.failures},
            "slow inputs (CPU > %gx budget)" % self.args.slow_factor: len(self.slow),
            "slowest": sorted(self.slow, reverse=True)[:5],
            "worst CPU/budget": [round(self.worst[0], 2), self.worst[1], self.worst[2], round(self.worst[3], 3)],
            "corpus ms/line (files >= 50 lines) median": round(statistics.median(per_line), 3) if per_line else None,
            "corpus ms/line max": round(per_line[-1], 3) if per_line else None,
            "python": sys.version.split()[0],
        }


def record(summary: dict) -> None:
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else f"# Reliability\n\n{BEGIN}\n{END}\n"
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    body = "\n".join([BEGIN, "", f"Recorded by `scripts/fuzz_campaign.py --record` on {when}:", "", "```json",
                      json.dumps(summary, indent=2, ensure_ascii=False), "```", "", END])
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + body + text[text.index(END) + len(END):]
    else:
        text += "\n" + body + "\n"
    DOC.write_text(text, encoding="utf-8")


def main(argv=None) -> int:
    args = parse_args(argv)
    campaign = Campaign(args)
    try:
        summary = campaign.run()
    except KeyboardInterrupt:
        summary = campaign.summary()
        summary["interrupted"] = True
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    print(f"files tried: {summary['files tried']}, mutants tried: {summary['mutants tried']} "
          f"(+{summary['prefixes tried']} prefixes, {summary['generated programs']} generated programs, "
          f"{summary['edits (warm vs cold)']} warm/cold edits), "
          f"failures found: {summary['failures found']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2, ensure_ascii=False), encoding="utf-8")
    if args.record:
        record(summary)
    return 1 if summary["failures found"] else 0


if __name__ == "__main__":
    sys.exit(main())
