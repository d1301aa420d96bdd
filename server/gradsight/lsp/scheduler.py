"""Running analyses off the event loop, debounced, and never for a version nobody wants.

Invariants:

- State is only mutated on the event loop thread. Worker threads get an immutable `Snapshot` and a
  `Config`, run the pure engine, and hand back a `Result`.
- A result is stored under a *stamp* `(version, config generation, dependency epoch)`. Only the
  newest stamp per document is kept; anything asking for an older one gets None and asks again.
- Before a queued job starts, it checks that its stamp is still the document's current stamp and
  skips the work otherwise, so a burst of keystrokes costs one analysis, not one per keystroke.
- A debounced task that is superseded is cancelled; a job already running in a thread cannot be
  interrupted, but its result is simply not published (the caller re-checks the stamp).
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Awaitable, Callable, Hashable

if TYPE_CHECKING:
    from ..engine import Analysis

log = logging.getLogger(__name__)

Stamp = tuple[int, int, int]


@dataclass(frozen=True)
class Result:
    analysis: Analysis
    imports: frozenset[str]


class AnalysisCache:
    def __init__(self, executor: Executor, is_current: Callable[[str, Stamp], bool],
                 on_finished: Callable[[], None] | None = None) -> None:
        self._executor = executor
        self._is_current = is_current
        self._on_finished = on_finished  # called on the event loop after every job (see `memory.Collector`)
        self._done: dict[str, tuple[Stamp, Result]] = {}
        self._running: dict[tuple[str, Stamp], asyncio.Future] = {}

    def peek(self, key: str, stamp: Stamp) -> Result | None:
        done = self._done.get(key)
        return done[1] if done and done[0] == stamp else None

    def busy(self) -> bool:
        """Is an analysis queued or running?"""
        return bool(self._running)

    def forget(self, key: str) -> None:
        self._done.pop(key, None)
        for running in [k for k in self._running if k[0] == key]:
            del self._running[running]

    async def get(self, key: str, stamp: Stamp, compute: Callable[[], Result]) -> Result | None:
        """The result for `stamp`, computing it in a worker thread if needed; None if outdated meanwhile."""
        if (hit := self.peek(key, stamp)) is not None:
            return hit
        if not self._is_current(key, stamp):
            return None
        future = self._running.get((key, stamp))
        if future is None:
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(self._executor, self._job, key, stamp, compute)
            self._running[(key, stamp)] = future
            future.add_done_callback(lambda f, k=key, s=stamp: self._finished(k, s, f))
        # Shield: a cancelled caller (a superseded debounce, a cancelled request) must not cancel
        # the shared job other callers may be waiting on.
        return await asyncio.shield(future)

    def _job(self, key: str, stamp: Stamp, compute: Callable[[], Result]) -> Result | None:
        if not self._is_current(key, stamp):
            return None  # superseded while it waited for a worker: skip the work
        return compute()

    def _finished(self, key: str, stamp: Stamp, future: asyncio.Future) -> None:
        if self._running.get((key, stamp)) is future:
            del self._running[(key, stamp)]
        if self._on_finished is not None:
            try:
                self._on_finished()
            except Exception:  # noqa: BLE001 - housekeeping must never lose a result
                log.exception("after-analysis hook failed")
        if future.cancelled() or future.exception() is not None:
            if not future.cancelled():
                log.error("analysis of %s failed", key, exc_info=future.exception())
            return
        result = future.result()
        if result is not None and self._is_current(key, stamp):
            self._done[key] = (stamp, result)


class Debouncer:
    """One pending task per key; scheduling again replaces (cancels) the pending one."""

    def __init__(self) -> None:
        self._tasks: dict[Hashable, asyncio.Task] = {}

    def schedule(self, key: Hashable, delay: float, action: Callable[[], Awaitable[None]]) -> None:
        self.cancel(key)
        self._tasks[key] = asyncio.ensure_future(self._run(key, delay, action))

    def cancel(self, key: Hashable) -> None:
        task = self._tasks.pop(key, None)
        if task is not None and not task.done():
            task.cancel()

    def cancel_all(self) -> None:
        for key in list(self._tasks):
            self.cancel(key)

    def pending(self) -> bool:
        """Whether any refresh is waiting or running (read from other threads: a plain dict read)."""
        return bool(self._tasks)

    async def _run(self, key: Hashable, delay: float, action: Callable[[], Awaitable[None]]) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            await action()
        except asyncio.CancelledError:
            pass
        except Exception:  # noqa: BLE001 - a failed refresh must never take the server down
            log.exception("scheduled work for %s failed", key)
        finally:
            if self._tasks.get(key) is asyncio.current_task():
                del self._tasks[key]
