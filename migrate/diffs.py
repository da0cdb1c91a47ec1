"""Unified diffs of migrated files (per cell for notebooks), optionally colored."""
from __future__ import annotations

import difflib

from migrate.findings import FileResult

_COLORS = {"+": "\033[32m", "-": "\033[31m", "@": "\033[36m"}
_RESET = "\033[0m"


def unified_diff(old: str, new: str, name: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True),
        fromfile=f"a/{name}", tofile=f"b/{name}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def file_diff(result: FileResult) -> str:
    if result.cells:
        return "".join(unified_diff(old, new, f"{result.path}[{label}]")
                       for label, old, new in result.cells)
    return unified_diff(result.old_source or "", result.new_source or "", result.path)


def colorize(diff: str) -> str:
    out = []
    for line in diff.splitlines(keepends=True):
        if line.startswith(("+++", "---")):
            out.append(f"\033[1m{line.rstrip(chr(10))}{_RESET}\n")
        elif line[:1] in _COLORS:
            out.append(f"{_COLORS[line[0]]}{line.rstrip(chr(10))}{_RESET}\n")
        else:
            out.append(line)
    return "".join(out)
