"""Turn the paths given on the command line into the files to migrate."""
from __future__ import annotations

import os
from pathlib import Path

SUFFIXES = (".py", ".ipynb")
SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints", ".tox", ".nox", ".venv", "venv",
    "env", "site-packages", "node_modules", "build", "dist", ".mypy_cache", ".pytest_cache",
})


def discover(paths: tuple[str, ...], exclude: tuple[str, ...] = ()) -> list[str]:
    """Files named directly are taken as they are (even symlinks, so they can be reported); folders are
    walked for .py and .ipynb files, without following symlinked folders, skipping tool and VCS folders."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            found.extend(_walk(path, exclude))
        else:
            found.append(path)
    return sorted(dict.fromkeys(found))


def _walk(root: str, exclude: tuple[str, ...]) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not _excluded(d, exclude))
        for name in sorted(files):
            full = os.path.join(folder, name)
            if name.endswith(SUFFIXES) and not _excluded(full, exclude):
                found.append(full)
    return found


def _excluded(path: str, patterns: tuple[str, ...]) -> bool:
    pure = Path(path)
    return any(pure.match(pattern) for pattern in patterns)
