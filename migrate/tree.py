"""Turning results into files: in place (guarded by git) or as a migrated copy of the input tree."""
from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

from migrate.discovery import SKIPPED_DIRS
from migrate.findings import FileResult
from migrate.writer import WriteRefused, atomic_write, uncommitted_reason, write_new


class TreeError(Exception):
    """A problem with the output folder as a whole (usage error)."""


def write_results_in_place(results: list[FileResult], force: bool) -> list[FileResult]:
    """Write every changed file over itself; files git could not restore are refused unless forced."""
    return [_write_in_place(result, force) if result.status == "changed" else result for result in results]


def _write_in_place(result: FileResult, force: bool) -> FileResult:
    reason = None if force else uncommitted_reason(result.path)
    if reason:
        return _refused(result, reason)
    try:
        atomic_write(result.path, result.new_bytes)
    except (WriteRefused, OSError) as error:
        return _refused(result, str(error))
    return result


def _refused(result: FileResult, reason: str) -> FileResult:
    return replace(result, status="failed", reason=f"not written: {reason}", new_bytes=None)


def write_tree(inputs: tuple[str, ...], results: list[FileResult], out_dir: Path, force: bool,
               exclude: tuple[str, ...] = ()) -> list[FileResult]:
    """Copy the input tree into `out_dir` and put the migrated files in it. Returns the results."""
    if out_dir.exists() and any(out_dir.iterdir()) and not force:
        raise TreeError(f"--out folder {out_dir} is not empty (pass --force to write into it)")
    base = input_base(inputs)
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in inputs:
        _copy_input(Path(path), out_dir / os.path.relpath(os.path.abspath(path), base))
    for result in results:
        if result.status == "changed":
            target = out_dir / os.path.relpath(os.path.abspath(result.path), base)
            write_new(target, result.new_bytes, mode_from=result.path)
    return results


def input_base(inputs: tuple[str, ...]) -> str:
    """The folder the output tree mirrors: the common parent of the inputs (a file's own folder)."""
    folders = [os.path.abspath(p) if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in inputs]
    return os.path.commonpath(folders)


def _copy_input(source: Path, target: Path) -> None:
    if source.is_dir() and not source.is_symlink():
        ignore = shutil.ignore_patterns(*SKIPPED_DIRS)
        shutil.copytree(source, target, symlinks=True, ignore=ignore, dirs_exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
