"""Inputs at gradsight's limits: bounded time and memory, and a clear message where it gives up.

Each case runs in a fresh process (tests/reliability/limit_cases.py) so that its peak RSS is its own.
Bounds are generous (a hang is 20x the budget 0.05 s + 2 ms per line, and 1.5 GiB of peak RSS): they
catch runaway behaviour, not slowness. The measured numbers are in docs/reliability.md; the full-size
cases (minutes) run with GRADSIGHT_RELIABILITY_FULL=1.
"""

from __future__ import annotations

import os

import pytest

import limit_cases

FULL = os.environ.get("GRADSIGHT_RELIABILITY_FULL") == "1"
MAX_RSS_MIB = 1536


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.full_only else [])
                                  for c in limit_cases.CASES])
def test_limit_case(case):
    if case.full_only and not FULL:
        pytest.skip("full-size limit case: set GRADSIGHT_RELIABILITY_FULL=1")
    m = limit_cases.measure_in_subprocess(case.name, timeout=1800 if case.full_only else 300)
    print(m)
    assert m.get("failure") is None, f"{case.name}: {m.get('failure')}\n{m.get('failure_detail') or ''}"
    assert m["peak_rss_mib"] < MAX_RSS_MIB, f"{case.name}: peak RSS {m['peak_rss_mib']} MiB"
    if case.gives_up:
        assert m["problems"], f"{case.name}: gradsight gave up without saying so"
        assert all(p.startswith("limit.py: ") for p in m["problems"]), m["problems"]  # names the file
    else:
        assert m["findings"] is not None


def test_giving_up_is_fast():
    """Rejecting an over-size file costs a scan, not an analysis."""
    m = limit_cases.measure_in_subprocess("over 5,000,000 characters")
    assert m.get("failure") is None and m["problems"]
    assert m["cpu_s"] < 10, m
