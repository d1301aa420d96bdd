"""Inputs at and past gradsight's limits, and a measuring harness (time, CPU, memory) for one of them.

    python tests/reliability/limit_cases.py NAME [--tracemalloc]   # prints one JSON line
    python tests/reliability/limit_cases.py --all [--full] [--record]   # a table (--record: into docs/reliability.md)

Each case runs in a fresh process so that its peak RSS (resource.getrusage) is its own.
`gives_up` cases must end with a plain-language `a.problems` entry instead of findings.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import resource
import subprocess
import sys
import time
from typing import Callable

HERE = pathlib.Path(__file__).resolve().parent


def _lines_50k() -> str:
    templates = [
        "v{a} = torch.randn(3, requires_grad=True) * {i}",
        "v{a} = v{b} + v{c}.detach()",
        "v{a} = v{b}.sum() if v{c} is not None else v{b}",
        "w{a} = [v{b}, v{c}]  # {i}",
        "print(v{a}.shape, {i})",
    ]
    out = ["import torch"]
    for i in range(50_000 - 1):
        out.append(templates[i % len(templates)].format(a=i % 500, b=(i * 7) % 500, c=(i * 13) % 500, i=i))
    return "\n".join(out) + "\n"


def _functions(n: int) -> str:
    return "import torch\nimport torch.nn as nn\n" + "".join(
        f"def step{i}(model, x, opt):\n    loss = model(x).pow(2).mean()\n    opt.zero_grad()\n"
        f"    loss.backward()\n    opt.step()\n    return loss.detach()\n\n" for i in range(n))


def _classes(n: int) -> str:
    return "import torch\nimport torch.nn as nn\n" + "".join(
        f"class Block{i}(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        f"        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n        return self.fc(x).relu_()\n\n"
        for i in range(n))


def _nested_ifs(depth: int) -> str:
    head = "import torch\nx = torch.randn(2, requires_grad=True)\n"
    return head + "".join("    " * i + f"if c{i}:\n" for i in range(depth)) + "    " * depth + "x.add_(1)\n"


def _nested_loops(depth: int) -> str:
    return ("import torch\nx = torch.randn(3, requires_grad=True)\n"
            + "".join("    " * i + f"for i{i} in range(2):\n" for i in range(depth))
            + "    " * depth + "x = x * 2 + x.detach()\nx.sum().backward()\n")


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], str]
    gives_up: bool = False  # must end with a message in a.problems
    full_only: bool = False  # minutes, not seconds: only with GRADSIGHT_RELIABILITY_FULL=1 / --full
    note: str = ""


CASES = [
    Case("50k lines of statements", _lines_50k, note="500 names, 5 statement shapes"),
    Case("100k-character line: flat call", lambda: "import torch\nx = torch.randn(3, requires_grad=True)\n"
         "y = torch.stack([" + ", ".join(["x"] * 33_000) + "])\ny.sum().backward()\n"),
    Case("100k-character line: x + x + ...", lambda: "import torch\nx = torch.randn(3, requires_grad=True)\ny = "
         + " + ".join(["x"] * 25_000) + "\n", gives_up=True, note="the parser recurses once per operator"),
    Case("100k-character string", lambda: "import torch\ns = '" + "ab😀" * 33_000 + "'\nx = torch.ones(1, requires_grad=True)"
         "\ny = x.numpy()\n"),
    Case("100k-character comment (CJK, emoji)", lambda: "import torch\n# " + "日本😀" * 33_000 + "\n"
         "x = torch.ones(1, requires_grad=True)\ny = x.numpy()\n"),
    Case("500-deep parentheses", lambda: "x = " + "(" * 500 + "1" + ")" * 500 + "\n", gives_up=True),
    Case("190-deep parentheses", lambda: "import torch\nx = torch.randn(2, requires_grad=True)\ny = "
         + "(" * 190 + "x" + ")" * 190 + "\ny.numpy()\n"),
    Case("300-deep nested ifs", lambda: _nested_ifs(300), note="Python allows 100 indentation levels: a GS001 finding"),
    Case("99-deep nested ifs", lambda: _nested_ifs(99)),
    Case("60 nested for loops", lambda: _nested_loops(60), note="loops nested deeper than 4 run once from UNKNOWN"),
    Case("98 nested for loops", lambda: _nested_loops(98), full_only=True,
         note="the deepest Python's 100 indentation levels allow"),
    Case("90 nested function definitions", lambda: "".join("    " * i + f"def f{i}(x):\n" for i in range(90))
         + "    " * 90 + "return x\n", note="below Python's limit of 100 indentation levels"),
    Case("1,000-long attribute-call chain", lambda: "import torch\nx = torch.randn(3, requires_grad=True)\ny = x"
         + ".mul(2).add(1)" * 500 + "\ny.sum().backward()\n"),
    Case("5,000-long attribute-call chain", lambda: "import torch\nx = torch.randn(3, requires_grad=True)\ny = x"
         + ".detach()" * 5000 + "\n", gives_up=True, note="the parser recurses once per call"),
    Case("3,000-branch elif chain", lambda: "x = 0\nif x == -1:\n    pass\n" + "".join(
        f"elif x == {i}:\n    pass\n" for i in range(3000)), gives_up=True, note="nested If nodes"),
    Case("2,000 functions", lambda: _functions(2000)),
    Case("200 nn.Module classes", lambda: _classes(200),
         note="was about n**3 in the definition-cache keys: test_many_modules_analyse_in_linear_time"),
    Case("over 5,000,000 characters", lambda: "x = 1\n" * 900_000, gives_up=True),
    Case("NUL bytes", lambda: "import torch\nx = 1\x00\n", gives_up=True),
    Case("16,000 reassignments in a loop", lambda: "import torch\nx = torch.randn(3, requires_grad=True)\n"
         "for i in range(3):\n" + "".join(f"    x = x * {i} + x.sum()\n" for i in range(16_000)) + "x.backward()\n",
         full_only=True, note="superlinear: 4,000 lines 8 s, 8,000 25 s, 16,000 83 s"),
    Case("10,000 functions (50k lines)", lambda: _functions(7143), full_only=True),
    Case("1,000 nn.Module classes", lambda: _classes(1000), full_only=True,
         note="took 250 s before the fix of test_many_modules_analyse_in_linear_time"),
]
BY_NAME = {c.name: c for c in CASES}


def measure(name: str, tracemalloc_peak: bool = False) -> dict:
    """Analyse one case in this process and measure it (call in a fresh process)."""
    sys.path.insert(0, str(HERE))
    import gs_fuzz as g
    from gradsight.analysis import analyze_source

    import warnings
    warnings.simplefilter("ignore")
    analyze_source("import torch\nx = torch.ones(1, requires_grad=True)\ny = x.numpy()\n")  # warm up
    text = BY_NAME[name].build()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if tracemalloc_peak:
        import tracemalloc
        tracemalloc.start()
    result = g.run_checked(text, "limit.py", min_hang_s=10)
    peak = None
    if tracemalloc_peak:
        import tracemalloc
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    a = result.analysis
    return {
        "name": name, "lines": g.line_count(text), "chars": len(text),
        "wall_s": round(result.wall, 3), "cpu_s": round(result.cpu, 3), "budget_s": round(g.budget_s(text), 3),
        "peak_rss_mib": round(rss1 / 1024, 1), "rss_growth_mib": round((rss1 - rss0) / 1024, 1),
        "tracemalloc_peak_mib": round(peak / 2 ** 20, 1) if peak is not None else None,
        "failure": result.failure.summary() if result.failure else None,
        "failure_detail": result.failure.detail[-2000:] if result.failure else None,
        "problems": list(a.problems) if a is not None else None,
        "findings": len(a.findings) if a is not None else None,
        "facts": len(a.facts) if a is not None else None,
    }


def measure_in_subprocess(name: str, timeout: float = 900, tracemalloc_peak: bool = False) -> dict:
    cmd = [sys.executable, str(HERE / "limit_cases.py"), name] + (["--tracemalloc"] if tracemalloc_peak else [])
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"name": name, "failure": f"hang: no result within {timeout}s (killed)", "wall_s": timeout}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"name": name, "failure": f"process failed (exit {proc.returncode}): {proc.stderr[-2000:]}",
                "wall_s": round(time.monotonic() - start, 1)}
    return json.loads(lines[-1])


def table(full: bool, only: list[str] | None = None) -> list[str]:
    rows = ["| case | lines | characters | wall s | CPU s | budget s | peak RSS MiB | Python peak MiB | result |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for case in CASES:
        if (case.full_only and not full) or (only and case.name not in only):
            continue
        m = measure_in_subprocess(case.name, timeout=3600, tracemalloc_peak=False)
        t = measure_in_subprocess(case.name, timeout=3600, tracemalloc_peak=True) if m.get("failure") is None else {}
        if m.get("failure"):
            outcome = f"FAILURE: {m['failure']}"
        elif m.get("problems"):
            outcome = "gave up: " + "; ".join(p.split(": ", 1)[-1] for p in m["problems"])[:120]
        else:
            outcome = f"{m['findings']} findings, {m['facts']} facts"
        if case.note:
            outcome += f" ({case.note})"
        rows.append(f"| {case.name} | {m.get('lines', '')} | {m.get('chars', 0):,} | {m.get('wall_s', '')} | "
                    f"{m.get('cpu_s', '')} | {m.get('budget_s', '')} | {m.get('peak_rss_mib', '')} | "
                    f"{t.get('tracemalloc_peak_mib', '')} | {outcome} |")
        print(rows[-1], flush=True)
    return rows


def record(rows: list[str]) -> None:
    doc = HERE.parents[1] / "docs" / "reliability.md"
    begin, end = "<!-- limits:begin -->", "<!-- limits:end -->"
    text = doc.read_text(encoding="utf-8")
    when = time.strftime("%Y-%m-%d", time.gmtime())
    body = "\n".join([begin, f"Recorded by `limit_cases.py --all --full --record` on {when}:", "", *rows, end])
    doc.write_text(text[:text.index(begin)] + body + text[text.index(end) + len(end):], encoding="utf-8")


def main(argv: list[str]) -> int:
    if argv and not argv[0].startswith("--"):
        print(json.dumps(measure(argv[0], "--tracemalloc" in argv)))
        return 0
    rows = table("--full" in argv)
    if "--record" in argv:
        record(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
