"""What a migration does (`Options`, part of every cache key) and how a run is bounded (`Budget`, not).

Kept free of libcst so that the command line, the cache and the progress line can use them before (or
without) importing the rewriting engine.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

DEFAULT_MAX_BYTES = 5_000_000
#: Per-file defaults that no real source file reaches (the largest corpus file, 1,300 lines, takes seconds and
#: a few hundred MB); a generated 60,000-line module does, and is skipped instead of taking the run down.
DEFAULT_FILE_TIMEOUT_S = 300.0
DEFAULT_FILE_MEMORY_MB = 2048


@dataclass(frozen=True)
class Options:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    unsafe: bool = False
    max_bytes: int = DEFAULT_MAX_BYTES
    # Free-form settings for individual transforms (e.g. {"mixed_precision": "auto"}).
    settings: tuple[tuple[str, str], ...] = field(default=())


@dataclass(frozen=True)
class Budget:
    """The most one file's migration may take: wall seconds, and memory (MB of resident set size
    grown while migrating it). None turns a limit off."""

    seconds: float | None = DEFAULT_FILE_TIMEOUT_S
    memory_mb: int | None = DEFAULT_FILE_MEMORY_MB

    def describe(self) -> str:
        parts = [f"{self.seconds:g} s" if self.seconds else "", f"{self.memory_mb} MB" if self.memory_mb else ""]
        return " / ".join(part for part in parts if part) or "none"


def unreadable_reason(path: str, max_bytes: int) -> str | None:
    """Why the file at `path` is not read at all (a link, not a regular file, too large), or None."""
    if os.path.islink(path):
        return "symbolic link: not followed, left untouched (migrate its target instead)"
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_size > max_bytes:
        return f"file is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit; left untouched"
    return None
