"""The working directory each side runs in: a private copy of the directory the user ran verify from.

`python path/to/train.py` resolves `open("data/train.csv")` against the process's working directory,
which is the user's shell directory, not the script's. So each side starts in a copy of the folder
`verify` was invoked from: relative data paths work as they do for the user, and the two sides cannot
overwrite each other's outputs (checkpoints, logs) or the user's files.

The copy is a real copy, never hard links or symbolic links: a script that opens an existing file for
writing (`open("log.txt", "w")`, an appended log) would write through a link into the user's file.
`shutil.copy2` lets the kernel copy without moving the data through Python (and share blocks on
copy-on-write file systems). Version-control folders, caches and virtual environments are left out:
programs read data, not those.

A folder too big to copy (over `limit_mb`, or with more than `MAX_FILES` files) is not copied: the
program's own folder is tried instead (its relative paths then resolve against its own folder), then
an empty folder; the report's `working_directory` says which and why.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import asdict, dataclass

DEFAULT_LIMIT_MB = 512.0
MAX_FILES = 20000
# Folders a program does not read its data from, and that can be huge.
SKIPPED_NAMES = frozenset({".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox",
                           ".nox", "node_modules", ".ipynb_checkpoints", ".idea", ".vscode"})


@dataclass(frozen=True)
class WorkdirPlan:
    """Which folder the sides start in a copy of (`source`; None: an empty folder) and why."""

    mode: str  # "copy of invocation directory", "copy of program directory", "empty"
    source: str | None
    size_mb: float
    note: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


class TooBig(Exception):
    """A folder over the copy limit; the message says by how much."""


def plan_workdir(invoked_from: str | None, program_dir: str, limit_mb: float = DEFAULT_LIMIT_MB,
                 exclude: tuple[str, ...] = ()) -> WorkdirPlan:
    """Choose what each side's working folder is a copy of: the invocation directory if it fits under
    `limit_mb`, else the program's own folder, else nothing. `exclude`: folders never copied (the
    harness's own temporary folder, when it lies inside the directory)."""
    if invoked_from is None:
        return WorkdirPlan("empty", None, 0.0, "no invocation directory given: each side starts in an empty folder")
    reasons = []
    candidates = [("copy of invocation directory", invoked_from)]
    if os.path.abspath(program_dir) != os.path.abspath(invoked_from):
        candidates.append(("copy of program directory", program_dir))
    for mode, folder in candidates:
        try:
            size = folder_size(folder, limit_mb, exclude)
        except TooBig as error:
            reasons.append(str(error))
            continue
        note = None if not reasons else "; ".join(reasons) + f": relative paths resolve against {folder} instead"
        return WorkdirPlan(mode, os.path.abspath(folder), round(size / 2 ** 20, 3), note)
    return WorkdirPlan("empty", None, 0.0, "; ".join(reasons) + ": each side starts in an empty folder "
                       "(raise --workdir-limit to copy it)")


def folder_size(folder: str, limit_mb: float, exclude: tuple[str, ...] = ()) -> int:
    """Bytes of the files a copy would hold; raises TooBig as soon as the limit is passed, so a huge
    home folder is not walked to the end."""
    limit, total, files = limit_mb * 2 ** 20, 0, 0
    for path in _files(folder, exclude):
        files += 1
        total += os.lstat(path).st_size
        if total > limit:
            raise TooBig(f"{folder} holds more than {limit_mb:g} MiB")
        if files > MAX_FILES:
            raise TooBig(f"{folder} holds more than {MAX_FILES} files")
    return total


def _files(folder: str, exclude: tuple[str, ...]):
    """Every regular file or link under `folder` a copy would hold."""
    excluded = {os.path.realpath(path) for path in exclude}
    for root, dirs, names in os.walk(folder):
        dirs[:] = [name for name in dirs if _wanted(os.path.join(root, name), name, excluded)]
        for name in names:
            yield os.path.join(root, name)


def _wanted(path: str, name: str, excluded: set[str]) -> bool:
    if name in SKIPPED_NAMES or os.path.realpath(path) in excluded:
        return False
    return not os.path.isfile(os.path.join(path, "pyvenv.cfg"))  # a virtual environment


def materialise(plan: WorkdirPlan, target: str, exclude: tuple[str, ...] = ()) -> str:
    """Create `target` as the plan says (a copy of its source, or empty) and return it."""
    if plan.source is None:
        os.makedirs(target, exist_ok=True)
        return target
    excluded = {os.path.realpath(path) for path in exclude}

    def ignore(root: str, names: list[str]) -> set[str]:
        return {name for name in names if os.path.isdir(os.path.join(root, name))
                and not _wanted(os.path.join(root, name), name, excluded)}

    shutil.copytree(plan.source, target, symlinks=True, ignore=ignore, copy_function=shutil.copy2,
                    ignore_dangling_symlinks=True)
    return target


def relocate(path: str | None, plan: WorkdirPlan, copy: str) -> str | None:
    """`path` inside the copied folder if it lies in the plan's source (a script run from its copy
    writes `__file__`-relative outputs there too, not beside the user's script); else unchanged."""
    if path is None or plan.source is None:
        return path
    relative = os.path.relpath(os.path.abspath(path), plan.source)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return path
    moved = os.path.join(copy, relative)
    return moved if os.path.exists(moved) else path
