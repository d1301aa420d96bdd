"""A keystroke that breaks a large module-level statement: comment out one entry line in the middle of timm's
vision_transformer.py default_cfgs dict, then restore it; prints ms per analysis (never asserts). Needs the
corpus (python bench/corpus.py). Run: .venv/bin/python bench/bench_break_dict.py
"""
import pathlib, time, statistics
from gradsight.analysis import analyze_source
from gradsight.engine.workspace import Workspace
p = next(pathlib.Path("bench/.corpus").rglob("timm/models/vision_transformer.py"))
text = p.read_text()
lines = text.split("\n")
start = next(i for i, l in enumerate(lines) if l.startswith("default_cfgs"))
end = next(i for i in range(start, len(lines)) if lines[i].startswith("}"))
mid = next(i for i in range((start + end) // 2, end) if lines[i].strip().startswith("'") and lines[i].rstrip().endswith("("))
ws = Workspace(p.parents[2])
analyze_source(text, str(p), workspace=ws)
times = []
for k in range(6):
    t2 = lines[:]; t2[mid] = "# " + t2[mid]
    broken = "\n".join(t2)
    t = time.perf_counter(); a = analyze_source(broken, str(p), workspace=ws); times.append((time.perf_counter() - t) * 1000)
    t = time.perf_counter(); analyze_source(text, str(p), workspace=ws); back = (time.perf_counter() - t) * 1000
    print(f"break {times[-1]:.0f} ms, restore {back:.0f} ms", [f.code for f in a.findings if f.code == "GS001"])
cold = time.perf_counter(); analyze_source(text, str(p)); print(f"cold (no ws) {(time.perf_counter()-cold)*1000:.0f} ms")
print("line", mid + 1, repr(lines[mid][:60]), "median break", statistics.median(times))
