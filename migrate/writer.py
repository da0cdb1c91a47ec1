"""Writing migrated files without ever losing user code: atomic replace, file mode kept, and a refusal
to overwrite files whose current content git cannot give back."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path


class WriteRefused(Exception):
    """The file was not written; the message says why."""


def atomic_write(path: str, data: bytes) -> None:
    """Replace `path` with `data` atomically, keeping its permission bits. Refuses read-only files."""
    info = os.stat(path)
    # By mode bits, not os.access: root may write anything, yet a read-only file says "leave me alone".
    if not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise WriteRefused("read-only file; left untouched (make it writable to migrate it)")
    folder = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=".tf-migrate-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, stat.S_IMODE(info.st_mode))
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def write_new(path: Path, data: bytes, mode_from: str | None = None) -> None:
    """Write a file into an output tree, creating folders, copying the mode of `mode_from`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if mode_from:
        shutil.copymode(mode_from, path)


def uncommitted_reason(path: str) -> str | None:
    """Why git could not restore `path` if we overwrote it, or None when it is safe (clean and tracked,
    or not in a git work tree at all)."""
    folder = os.path.dirname(os.path.abspath(path))
    root = _git_root(folder)
    if root is None:
        return None
    status = _git_status(root).get(os.path.relpath(os.path.realpath(path), root))
    if status is None:
        return None
    if status == "??":
        return "file is not tracked by git; commit it first or pass --force"
    return "file has uncommitted changes; commit or stash them first, or pass --force"


@lru_cache(maxsize=None)
def _git_root(folder: str) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=folder,
                             capture_output=True, text=True, check=False)
    except OSError:
        return None
    return os.path.realpath(out.stdout.strip()) if out.returncode == 0 else None


@lru_cache(maxsize=None)
def _git_status(root: str) -> dict[str, str]:
    out = subprocess.run(["git", "status", "--porcelain", "-z", "--untracked-files=all"], cwd=root,
                         capture_output=True, check=False)
    entries: dict[str, str] = {}
    records = out.stdout.decode("utf-8", "surrogateescape").split("\0")
    index = 0
    while index < len(records):
        record = records[index]
        index += 1
        if len(record) < 4:
            continue
        code, name = record[:2], record[3:]
        entries[name] = code.strip() or code
        if code[0] in "RC":  # renames carry the old name in the next record
            index += 1
    return entries
