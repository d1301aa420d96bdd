"""scheduler.py: outdated analyses are skipped, shared, and debounced work is replaced."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from gradsight.analysis import Analysis
from gradsight.lsp.scheduler import AnalysisCache, Debouncer, Result


async def test_outdated_jobs_are_skipped_and_current_ones_shared():
    current = {"a": (2, 0, 0)}
    calls = []
    release = threading.Event()

    def compute(tag):
        def run():
            calls.append(tag)
            release.wait(2)
            return Result(Analysis(path=tag), frozenset())
        return run

    with ThreadPoolExecutor(max_workers=1) as pool:
        cache = AnalysisCache(pool, lambda key, stamp: current.get(key) == stamp)
        blocker = asyncio.ensure_future(cache.get("a", (2, 0, 0), compute("first")))
        await asyncio.sleep(0.05)  # "first" is running and holds the only worker
        stale = asyncio.ensure_future(cache.get("a", (1, 0, 0), compute("stale")))
        twin = asyncio.ensure_future(cache.get("a", (2, 0, 0), compute("twin")))
        release.set()
        first, old, same = await asyncio.gather(blocker, stale, twin)
    assert first is same and first.analysis.path == "first"
    assert old is None  # its stamp was outdated before it started: never computed
    assert calls == ["first"]
    assert cache.peek("a", (2, 0, 0)) is first
    cache.forget("a")
    assert cache.peek("a", (2, 0, 0)) is None


async def test_a_cancelled_waiter_does_not_cancel_the_shared_job():
    with ThreadPoolExecutor(max_workers=1) as pool:
        cache = AnalysisCache(pool, lambda key, stamp: True)

        def slow():
            import time
            time.sleep(0.1)
            return Result(Analysis(path="x"), frozenset())

        waiter = asyncio.ensure_future(cache.get("k", (1, 0, 0), slow))
        other = asyncio.ensure_future(cache.get("k", (1, 0, 0), slow))
        await asyncio.sleep(0.02)
        waiter.cancel()
        assert (await other).analysis.path == "x"


async def test_debouncer_runs_only_the_last_action():
    ran = []
    debouncer = Debouncer()

    def action(tag):
        async def run():
            ran.append(tag)
        return run

    for i in range(5):
        debouncer.schedule("doc", 0.05, action(i))
    debouncer.schedule("other", 0, action("other"))
    await asyncio.sleep(0.15)
    assert ran == ["other", 4]

    async def boom():
        raise RuntimeError("logged, not raised")

    debouncer.schedule("doc", 0, boom)
    await asyncio.sleep(0.02)
    debouncer.schedule("doc", 10, action("never"))
    debouncer.cancel_all()
    await asyncio.sleep(0.02)
    assert ran == ["other", 4]
