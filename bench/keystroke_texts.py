"""The keystroke sequences the typing benchmarks replay on timm's vision_transformer.py, in one place so that
`bench_typing.py` (wall time) and `keystroke_counts.py` (deterministic call counts) replay the same texts. No
imports of gradsight here: `keystroke_counts.py` runs against other trees' engines."""

from __future__ import annotations

TYPED = ["h = self.forward_features(x)", "h = h * 2", "print(h.shape)"]


def typing_versions(text: str):
    """Every intermediate text of the session."""
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("    def forward(") and i > 1300)
    # new lines go right after the line that ends the signature
    sig_end = next(i for i in range(at, len(lines)) if lines[i].rstrip().endswith(":"))
    pos = sig_end + 1
    indent = "        "
    typed: list[str] = []
    for line in TYPED:
        typed.append(indent)  # Enter (auto-indent)
        yield "\n".join(lines[:pos] + typed + lines[pos:])
        for ch in line:
            typed[-1] += ch
            yield "\n".join(lines[:pos] + typed + lines[pos:])
    while typed:  # Backspace everything again
        while typed[-1]:
            typed[-1] = typed[-1][:-1]
            yield "\n".join(lines[:pos] + typed + lines[pos:])
        typed.pop()  # Backspace at the start of the (now empty) line joins it with the one above
        yield "\n".join(lines[:pos] + typed + lines[pos:])


def break_versions(text: str):
    """`bench_break_dict.py`'s six break/restore pairs: one entry line in the middle of `default_cfgs` commented out."""
    lines = text.split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("default_cfgs"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("}"))
    mid = next(i for i in range((start + end) // 2, end)
               if lines[i].strip().startswith("'") and lines[i].rstrip().endswith("("))
    t2 = lines[:]
    t2[mid] = "# " + t2[mid]
    broken = "\n".join(t2)
    for _ in range(6):
        yield broken
        yield text
