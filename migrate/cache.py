"""A cache of per-file results, keyed by what decides them: the file's bytes, the tool's code and the
options. A re-run over an unchanged repository reads and hashes each file and parses none (black and
ruff keep the same kind of cache).

Where: `--cache-dir`, else `$TF_MIGRATE_CACHE_DIR`, else the user cache folder
(`$XDG_CACHE_HOME/tf-migrate` or `~/.cache/tf-migrate`); never inside the repository being migrated
unless asked. `--no-cache` (or `TF_MIGRATE_CACHE_DIR=off`) turns it off. Entries are written to a
temporary file and renamed into place, so concurrent runs and workers never see half an entry; an entry
that cannot be read is a miss.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import tempfile
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from migrate import __version__
from migrate.findings import FileResult
from migrate.options import Options

ENV_VAR = "TF_MIGRATE_CACHE_DIR"
_OFF = {"off", "0", "none", "no", ""}
_PACKAGES = ("migrate", "transforms")
_CODE_SUFFIXES = (".py", ".json")
#: Results that depend on something besides the bytes (time, memory, an error of ours) are not kept.
_UNCACHED_REASONS = ("internal error", "took over", "needed over")


def default_cache_dir() -> Path | None:
    """The cache folder when none is given on the command line (None: caching turned off)."""
    configured = os.environ.get(ENV_VAR)
    if configured is not None:
        return None if configured.strip().lower() in _OFF else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tf-migrate"


@lru_cache(maxsize=1)
def tool_fingerprint() -> str:
    """The version plus a digest of the tool's own code and tables, so that an edited transform (an
    editable install, a development checkout) never reads results the old code made."""
    digest = hashlib.sha256(__version__.encode())
    root = Path(__file__).resolve().parent.parent
    for package in _PACKAGES:
        for path in sorted((root / package).rglob("*")):
            if path.suffix in _CODE_SUFFIXES and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class ResultCache:
    """Results stored as `<dir>/<fingerprint>/<key[:2]>/<key>.pickle`. Picklable (a folder name), so
    a pool worker can carry it too."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory) / tool_fingerprint()

    def key(self, path: str, data: bytes, options: Options) -> str:
        """What decides a file's result: its kind (.py or notebook), its bytes and the options."""
        digest = hashlib.sha256()
        digest.update(repr((os.path.splitext(path)[1], options)).encode())
        digest.update(b"\0")
        digest.update(data)
        return digest.hexdigest()

    def get(self, key: str, path: str) -> FileResult | None:
        """The stored result for `key`, given the path it now has; None on a miss or a bad entry."""
        try:
            with open(self._entry(key), "rb") as handle:
                result = pickle.load(handle)
        except Exception:  # missing, truncated by a crash, from another Python: all misses
            return None
        return replace(result, path=path) if isinstance(result, FileResult) else None

    def put(self, key: str, result: FileResult) -> None:
        """Store `result` unless it depends on more than the key; a write error only loses the entry."""
        if result.reason.startswith(_UNCACHED_REASONS):
            return
        entry = self._entry(key)
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            handle, temp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-")
        except OSError:
            return
        try:
            with os.fdopen(handle, "wb") as out:
                pickle.dump(result, out, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temp, entry)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.pickle"
