"""Stop one file's migration when it runs over its budget (time or memory), so the run goes on.

A watchdog thread samples the wall clock and the process's resident set size a few times a second. When
the file is over budget it interrupts the main thread (where the CLI and every pool worker migrate
files), which raises `BudgetExceeded` wherever the migration is; the runner turns that into a skipped
file with the reason. Off the main thread (a library caller's thread) it cannot interrupt: the runner
then calls `checkpoint()` between transforms, which raises as soon as the watchdog has seen the overrun.
"""
from __future__ import annotations

import _thread
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from migrate.options import Budget

_SIGNAL = getattr(signal, "SIGUSR1", None)  # simulated by _thread.interrupt_main; never sent for real
_POLL_S = 0.1
_ACTIVE: ContextVar[Watchdog | None] = ContextVar("tf_migrate_budget", default=None)


class BudgetExceeded(BaseException):
    """Raised inside a file's migration when it is over its budget; the message says which limit.

    A BaseException, like KeyboardInterrupt, so that no `except Exception` in a transform swallows it."""


class Watchdog:
    """Samples one file's elapsed time and memory growth until stopped."""

    def __init__(self, budget: Budget, interrupt: bool) -> None:
        self.budget = budget
        self.interrupt = interrupt
        self.reason: str | None = None
        self._start = time.monotonic()
        self._start_rss = resident_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="tf-migrate-budget", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def check(self) -> None:
        """Raise BudgetExceeded if the watchdog saw the file go over budget."""
        if self.reason:
            raise BudgetExceeded(self.reason)

    def _watch(self) -> None:
        while not self._stop.wait(_POLL_S):
            self.reason = self._overrun()
            if self.reason:
                if self.interrupt:
                    _thread.interrupt_main(_SIGNAL)
                return

    def _overrun(self) -> str | None:
        seconds, memory_mb = self.budget.seconds, self.budget.memory_mb
        elapsed = time.monotonic() - self._start
        if seconds and elapsed > seconds:
            return f"took over {seconds:g} s (the per-file time budget, --file-timeout)"
        if memory_mb and self._start_rss is not None:
            grown = (resident_mb() or 0) - self._start_rss
            if grown > memory_mb:
                return (f"needed over {memory_mb} MB after {elapsed:.0f} s "
                        f"(the per-file memory budget, --file-memory)")
        return None


@contextmanager
def enforced(budget: Budget | None) -> Iterator[Watchdog | None]:
    """Watch the code run inside the block against `budget` (None: no limits, no thread)."""
    if budget is None or not (budget.seconds or budget.memory_mb):
        yield None
        return
    on_main = threading.current_thread() is threading.main_thread() and _SIGNAL is not None
    watchdog = Watchdog(budget, interrupt=on_main)
    previous = signal.signal(_SIGNAL, _make_handler(watchdog)) if on_main else None
    token = _ACTIVE.set(watchdog)
    watchdog.start()
    try:
        yield watchdog
    finally:
        watchdog.stop()
        _ACTIVE.reset(token)
        if on_main:
            signal.signal(_SIGNAL, previous)


def checkpoint() -> None:
    """Raise BudgetExceeded if the file being migrated (in this thread) is over its budget."""
    watchdog = _ACTIVE.get()
    if watchdog is not None:
        watchdog.check()


#: Memory libcst's native parser takes per character of source, at most: ~300 on real files (comments and
#: docstrings are cheap), ~1,250 on dense generated code (a rename-only module). The rest of the
#: migration takes several times the parse.
PARSE_BYTES_PER_CHAR = 1300


def check_parse(characters: int) -> None:
    """Raise BudgetExceeded before parsing a source of `characters` characters whose parse alone would
    need more than the memory budget. libcst's parser holds the GIL and cannot be interrupted: the
    watchdog would only see the overrun once the whole tree is built (3 GB for a 60,000-line module)."""
    watchdog = _ACTIVE.get()
    memory_mb = watchdog.budget.memory_mb if watchdog is not None else None
    estimate_mb = characters * PARSE_BYTES_PER_CHAR / 2**20
    if memory_mb and estimate_mb > memory_mb:
        raise BudgetExceeded(f"needed over {memory_mb} MB: parsing its {characters:,} characters alone takes "
                             f"about {estimate_mb:,.0f} MB (the per-file memory budget, --file-memory)")


def _make_handler(watchdog: Watchdog):
    def handler(_signum, _frame) -> None:
        watchdog.check()
    return handler


_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20 if hasattr(os, "sysconf") else 0.0


def resident_mb() -> float | None:
    """This process's resident set size in MB (None where /proc is not available)."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * _PAGE_MB
    except (OSError, IndexError, ValueError):
        return None
