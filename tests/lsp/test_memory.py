"""The server's housekeeping: cached line indexes, and keeping full garbage collections off the critical path."""

from __future__ import annotations

import asyncio
import gc
import random
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from gradsight.analysis import Analysis
from gradsight.lsp import memory
from gradsight.lsp.memory import Collector
from gradsight.lsp.positions import IndexCache, LineIndex
from gradsight.lsp.scheduler import AnalysisCache, Result


def _reference(text: str) -> tuple[list[int], list[int]]:
    starts, ends = [0], []
    for match in re.finditer(r"\r\n|\r|\n", text):
        ends.append(match.start())
        starts.append(match.end())
    ends.append(len(text))
    return starts, ends


@pytest.mark.parametrize("text", ["", "x", "\n", "\n\n", "a\nb", "a\nb\n", "é\n😀x\n\u2028y\x0c\n", "a\r\nb\rc\n"])
def test_line_index_matches_the_line_definition(text):
    index = LineIndex(text)
    assert (index._starts, index._ends) == _reference(text)


def test_line_index_fast_path_on_random_texts():
    rng = random.Random(7)
    for _ in range(300):
        text = "".join(rng.choice("ab \n\n😀é\t\x0c") for _ in range(rng.randrange(0, 60)))
        index = LineIndex(text)
        assert (index._starts, index._ends) == _reference(text)


def test_index_cache_reuses_an_index_for_the_same_text_only():
    cache = IndexCache(size=2)
    text = "a\nb\n"
    first = cache.get("file:///a.py", text)
    assert cache.get("file:///a.py", text) is first
    assert cache.get("file:///a.py", "".join(["a\n", "b\n"])) is first  # equal text, another object
    assert cache.get("file:///a.py", text, "utf-8") is not first  # another encoding
    changed = cache.get("file:///a.py", "a\nbc\n")
    assert changed.line_text(1) == "bc"
    cache.get("file:///b.py", "b")
    cache.get("file:///c.py", "c")  # evicts a.py, the least recently used
    assert cache.get("file:///a.py", "a\nbc\n") is not changed
    cache.forget("file:///a.py")
    cache.clear()


@pytest.fixture
def frozen_state():
    """Leave the test process's collector as it was found."""
    yield
    gc.unfreeze()


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_disabled_collector_does_nothing():
    collector = Collector.disabled()
    before = gc.get_freeze_count()
    collector.started()
    collector.work_done()  # no running loop needed
    collector.cancel()
    assert gc.get_freeze_count() == before


def test_loaded_freezes_the_warm_up_imports_unless_an_analysis_runs(frozen_state):
    busy = [True]
    collector = Collector(busy=lambda: busy[0])
    kept = [_Cycle() for _ in range(50)]
    collector.loaded()
    assert any(o is kept[0] for o in gc.get_objects())  # an analysis runs: nothing frozen
    busy[0] = False
    collector.loaded()
    assert not any(o is kept[0] for o in gc.get_objects())  # frozen: in no generation
    gc.unfreeze()
    Collector.disabled().loaded()
    assert any(o is kept[0] for o in gc.get_objects())


def test_warm_up_imports_the_engine_and_the_rules():
    import subprocess
    import sys

    code = ("import sys, threading\n"
            "from gradsight.lsp.session import Session\n"
            "class S: collector = type('C', (), {'loaded': lambda self: print('loaded')})()\n"
            "Session.warm_up(S())\n"
            "[t.join() for t in threading.enumerate() if t.name == 'gradsight-warm-up']\n"
            "print(sum(m.startswith('gradsight.rules.gs') for m in sys.modules) > 50, 'gradsight.analysis' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["loaded", "True", "True"]


def test_freeze_collects_young_garbage_first_and_deep_collection_frees_frozen_cycles(frozen_state, monkeypatch):
    collector = Collector()
    collector.started()
    assert gc.get_freeze_count() > 0
    garbage = [_Cycle() for _ in range(50)]
    del garbage
    kept = [_Cycle() for _ in range(50)]
    collector._freeze_young()
    assert collector.stats["freezes"] == 1
    assert not any(o is kept[0] for o in gc.get_objects(2))  # frozen: no longer in the oldest generation
    # Frozen objects in a cycle wait for the deep collection...
    del kept
    collector._deep_collect()
    assert collector.stats["deep"] == 0  # not within DEEP_PERIOD of start-up
    monkeypatch.setattr(memory, "DEEP_PERIOD", 0.0)
    collector._deep_collect()
    assert collector.stats["deep"] == 1
    assert not any(isinstance(o, _Cycle) for o in gc.get_objects())
    # ... which does not run again until something was frozen since.
    collector._deep_collect()
    assert collector.stats["deep"] == 1


def test_collector_waits_for_a_pause_in_the_analyses(frozen_state, monkeypatch):
    monkeypatch.setattr(memory, "SETTLE", 0.01)
    monkeypatch.setattr(memory, "DEEP_IDLE", 0.05)
    busy = [True]
    collector = Collector(busy=lambda: busy[0])

    async def run():
        collector.work_done()
        await asyncio.sleep(0.05)
        assert collector.stats["freezes"] == 0  # an analysis is running
        busy[0] = False
        collector.work_done()
        await asyncio.sleep(0.05)
        assert collector.stats["freezes"] == 1
        collector.cancel()

    asyncio.run(run())


def test_typing_pushes_the_freeze_back(frozen_state, monkeypatch):
    monkeypatch.setattr(memory, "SETTLE", 0.05)
    collector = Collector()

    async def run():
        for _ in range(4):
            collector.work_done()
            await asyncio.sleep(0.01)
        assert collector.stats["freezes"] == 0
        await asyncio.sleep(0.1)
        assert collector.stats["freezes"] == 1
        collector.cancel()

    asyncio.run(run())


async def test_analysis_cache_reports_finished_jobs_and_busy():
    finished = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        cache = AnalysisCache(pool, lambda key, stamp: True, lambda: finished.append(cache.busy()))
        assert not cache.busy()
        task = asyncio.ensure_future(cache.get("k", (1, 0, 0), lambda: Result(Analysis(path="k"), frozenset())))
        await asyncio.sleep(0)
        assert cache.busy()
        result = await task
    assert result is not None and result.analysis.path == "k"
    assert finished == [False]  # called once, after the job left the running set
