"""Keeping Python's full garbage collections off the editor's critical path.

The server holds a lot of long-lived container objects: the syntax trees the engine keeps for imported
workspace files and recently edited ones, its per-definition results, every open document's analysis.
With the whole of a large workspace open that is close to a million objects, and CPython's full (generation
2) collection walks all of them whenever the objects that survived into the oldest generation have grown by
a quarter: 150-550 ms each on a busy 2-core machine, about one every two seconds while a workspace opens,
and at a random moment afterwards, typically inside the next keystroke's analysis (a one-character
`didChange` took 300 ms instead of 30 once a collection landed in it).

`Collector` moves objects that have survived into the *permanent* generation (`gc.freeze()`), which
collections skip:

- once after start-up (modules, classes, pygls's and lsprotocol's tables), and once more when the engine and
  the rule modules, imported in a background thread after `initialize`, are loaded (`loaded`);
- in every pause: when no analysis has finished for `SETTLE` seconds and none is queued or running: first a
  collection of everything not yet frozen (only what was allocated since the last freeze), then the freeze.
  Never while an analysis runs, so that no temporary of a half-done analysis is frozen. (While a whole
  workspace opens there is no pause, and Python collects as it always does.)
  The first such freeze walks everything allocated since start-up (85-230 ms with three 5,000-line files
  open); later ones, only what the last edits left (0.2-3 ms).

Frozen objects are still freed as soon as nothing refers to them; only *cyclic* garbage among them waits,
for the deep collection (`gc.unfreeze()`, a full collection, `gc.freeze()`): in a pause of `DEEP_IDLE`
seconds, at most every `DEEP_PERIOD` seconds. After a large collection, freed memory is handed back to the
operating system (`malloc_trim`, glibc only): the worker threads' allocations otherwise stay in glibc's
per-thread arenas and in the resident size.

At log level debug every collection that takes 20 ms or more is logged, with its generation and thread.
Only the server process installs a `Collector` (`lsp.main`); tests and embedders get `Collector.disabled()`.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from typing import Callable

log = logging.getLogger(__name__)

SETTLE = 0.05  # seconds with no analysis finishing before young survivors are frozen
DEEP_IDLE = 2.0  # seconds of no analyses before a deep collection may run
DEEP_PERIOD = 300.0  # ... at most this often
TRIM_AFTER = 0.1  # seconds; a collection this slow freed enough to be worth a malloc_trim
SLOW_GC = 0.02  # seconds; slower collections are logged at debug level


class Collector:
    def __init__(self, enabled: bool = True, busy: Callable[[], bool] | None = None) -> None:
        self.enabled = enabled
        self.busy = busy or (lambda: False)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._settle: asyncio.TimerHandle | None = None
        self._deep: asyncio.TimerHandle | None = None
        self._last_freeze = time.monotonic()
        self._last_deep = time.monotonic()
        self._frozen_since = 0  # objects frozen since the last deep collection (some may have been freed since)
        self._gc_started: dict[int, float] = {}
        self._trim: Callable[[int], int] | None | bool = False  # False: not looked up yet
        self.stats = {"freezes": 0, "freeze_s": 0.0, "deep": 0, "deep_s": 0.0}

    @classmethod
    def disabled(cls) -> "Collector":
        return cls(enabled=False)

    # -- hooks ---------------------------------------------------------------------------------------

    def started(self) -> None:
        """After start-up, before serving: everything that exists now lives as long as the server."""
        if not self.enabled:
            return
        gc.freeze()  # no collection first: start-up leaves next to no garbage, and this is on the start-up path
        self._last_freeze = self._last_deep = time.monotonic()
        log.debug("gc: froze the start-up objects")

    def loaded(self) -> None:
        """The engine and the rule modules finished importing (`Session.warm_up`, in its own thread, after
        `started`): they live as long as the server too. Frozen unless an analysis is running (its temporaries
        would be frozen with them; then the next pause's freeze takes the modules)."""
        if not self.enabled or self.busy():
            return
        gc.freeze()
        log.debug("gc: froze the engine and the rules")

    def work_done(self) -> None:
        """An analysis finished (called on the event loop thread)."""
        if not self.enabled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._loop = loop
        if self._settle is not None:
            self._settle.cancel()
        # Re-armed by every analysis that finishes, so it runs in a pause.
        self._settle = loop.call_later(SETTLE, self._freeze_young)
        if self._deep is not None:
            self._deep.cancel()
        self._deep = loop.call_later(DEEP_IDLE, self._deep_collect)

    def cancel(self) -> None:
        for handle in (self._settle, self._deep):
            if handle is not None:
                handle.cancel()
        self._settle = self._deep = None

    # -- work ----------------------------------------------------------------------------------------

    def _freeze_young(self) -> None:
        self._settle = None
        if self.busy():
            return  # its temporaries would be frozen with the survivors; the next `work_done` re-arms this
        t0 = time.perf_counter()
        collected = gc.collect()
        # After a full collection every survivor is in the oldest generation. (Not gc.get_freeze_count(): it
        # walks the whole permanent generation, ~50 ms for a million objects.)
        survivors = len(gc.get_objects(2))
        gc.freeze()
        dt = time.perf_counter() - t0
        self._frozen_since += survivors
        self._last_freeze = time.monotonic()
        self.stats["freezes"] += 1
        self.stats["freeze_s"] += dt
        if dt >= TRIM_AFTER:
            self._malloc_trim()
        log.debug("gc: collected %d, froze %d, %.1f ms", collected, survivors, dt * 1000)

    def _deep_collect(self) -> None:
        self._deep = None
        if self.busy():
            return  # the next `work_done` re-arms this
        if not self._frozen_since or time.monotonic() - self._last_deep < DEEP_PERIOD:
            return
        t0 = time.perf_counter()
        gc.unfreeze()
        collected = gc.collect()
        frozen = len(gc.get_objects(2))
        gc.freeze()
        self._malloc_trim()
        dt = time.perf_counter() - t0
        self._frozen_since = 0
        self._last_deep = time.monotonic()
        self._last_freeze = time.monotonic()
        self.stats["deep"] += 1
        self.stats["deep_s"] += dt
        log.debug("gc: deep collection freed %d objects, %d kept, %.1f ms", collected, frozen, dt * 1000)

    def _malloc_trim(self) -> None:
        if self._trim is False:
            self._trim = _malloc_trim()
        if self._trim is not None:
            self._trim(0)

    # -- diagnostics ---------------------------------------------------------------------------------

    def log_slow_collections(self) -> None:
        """Log every collection slower than SLOW_GC (debug level; for finding pauses)."""
        if self._on_gc not in gc.callbacks:
            gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict) -> None:
        ident = threading.get_ident()
        if phase == "start":
            self._gc_started[ident] = time.perf_counter()
            return
        started = self._gc_started.pop(ident, None)
        if started is None:
            return
        dt = time.perf_counter() - started
        if dt >= SLOW_GC and log.isEnabledFor(logging.DEBUG):
            log.debug("gc: generation %d collection took %.1f ms (%d collected, thread %s)", info.get("generation", -1),
                      dt * 1000, info.get("collected", 0), threading.current_thread().name)


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None elsewhere."""
    try:
        import ctypes

        trim = ctypes.CDLL(None).malloc_trim  # the process's own symbols: libc is among them on Linux
    except (ImportError, OSError, AttributeError, TypeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim
