"""A one-line progress display on stderr while files are migrated: files done / total, elapsed time,
the file just finished. Shown only when stderr is a terminal and the run is not quiet; it rewrites
itself in place (carriage return), at most a few times a second, and erases itself at the end so the
summary line prints as before."""
from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")
_INTERVAL_S = 0.2


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = _is_terminal(self.stream) if enabled is None else enabled
        self.done = 0
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._drawn = False

    def track(self, results: Iterable[T], name=lambda result: getattr(result, "path", "")) -> Iterator[T]:
        """Yield `results` unchanged, advancing the display once per result."""
        try:
            for result in results:
                self.advance(name(result))
                yield result
        finally:
            self.close()

    def advance(self, current: str = "") -> None:
        self.done += 1
        now = time.monotonic()
        if self.enabled and (now - self._last_draw >= _INTERVAL_S or self.done == self.total):
            self._last_draw = now
            self._draw(self.line(current, now - self._start))

    def line(self, current: str, elapsed: float) -> str:
        """`[  12/300]  0:07  path/to/file.py`, the path shortened from the left to fit the terminal."""
        width = shutil.get_terminal_size((100, 20)).columns - 1
        head = f"[{self.done:>{len(str(self.total))}}/{self.total}] {_clock(elapsed)}  "
        room = max(0, width - len(head))
        if len(current) > room:
            current = "..." + current[-(room - 3):] if room > 3 else ""
        return head + current

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def _draw(self, text: str) -> None:
        self.stream.write("\r\x1b[K" + text)
        self.stream.flush()
        self._drawn = True


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}" if minutes < 60 else f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
