"""Run the per-file migration over many files, in-process or in a process pool."""
from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

from migrate.findings import FileResult
from migrate.runner import Options, migrate_path


def migrate_files(paths: list[str], options: Options, jobs: int = 1) -> Iterator[FileResult]:
    """Results in the order of `paths`. With jobs > 1 the files are spread over worker processes."""
    if jobs <= 1 or len(paths) <= 1:
        for path in paths:
            yield migrate_path(path, options)
        return
    chunk = max(1, len(paths) // (jobs * 8))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(migrate_path, paths, [options] * len(paths), chunksize=chunk)
