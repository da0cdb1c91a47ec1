"""Run the per-file migration over many files, in-process or in a process pool, with the result cache
in front: the parent reads and hashes every file, answers hits itself, and migrates only the misses
(so a re-run over an unchanged tree parses nothing and starts no worker)."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from migrate.cache import ResultCache
from migrate.findings import FileResult
from migrate.options import Budget, Options, unreadable_reason

if TYPE_CHECKING:
    from concurrent.futures import Future

OnResult = Callable[[FileResult], None]


@dataclass
class _Task:
    """One file: its bytes (None when it is not read: the runner reports why), its cache key, and its
    result when known without migrating (a cache hit)."""

    path: str
    data: bytes | None = None
    key: str = ""
    result: FileResult | None = None


def migrate_files(paths: list[str], options: Options, jobs: int = 1, cache: ResultCache | None = None,
                  budget: Budget | None = None, on_result: OnResult | None = None) -> Iterator[FileResult]:
    """Results in the order of `paths`. With jobs > 1 the files are spread over worker processes.
    `on_result` is called as each result is ready (in completion order: for a progress display)."""
    tasks = (_prepare(path, options, cache) for path in paths)
    if jobs <= 1 or len(paths) <= 1:
        results = (_finish(task, _migrate(task, options, budget), cache) for task in tasks)
    else:
        results = _in_pool(list(tasks), options, jobs, cache, budget, on_result)
        on_result = None  # the pool reports in completion order itself
    for result in results:
        if on_result:
            on_result(result)
        yield result


def _prepare(path: str, options: Options, cache: ResultCache | None) -> _Task:
    """Read the file and look it up in the cache. A file that is not to be read (a link, too large) or
    cannot be read gets no bytes: the runner reports why, as it always has."""
    try:
        if unreadable_reason(path, options.max_bytes):
            return _Task(path)
        with open(path, "rb") as handle:
            data = handle.read()
    except Exception:
        return _Task(path)  # the runner reports the error as it always has
    if cache is None:
        return _Task(path, data)
    key = cache.key(path, data, options)
    return _Task(path, data, key, cache.get(key, path))


def _migrate(task: _Task, options: Options, budget: Budget | None) -> FileResult:
    if task.result is not None:
        return task.result
    from migrate.runner import migrate_bytes, migrate_path  # here: a run of cache hits needs no libcst
    if task.data is None:
        return migrate_path(task.path, options)
    return migrate_bytes(task.path, task.data, options, budget)


def _finish(task: _Task, result: FileResult, cache: ResultCache | None) -> FileResult:
    """Store a fresh result (not a hit, not a file that was never read)."""
    if cache is not None and task.key and task.result is None:
        cache.put(task.key, result)
    return result


def _in_pool(tasks: list[_Task], options: Options, jobs: int, cache: ResultCache | None,
             budget: Budget | None, on_result: OnResult | None) -> Iterator[FileResult]:
    """Migrate the misses in `jobs` worker processes, largest first (the long files start early, so
    they do not end the run alone), and yield every result in the order of `tasks`."""
    for task in tasks:
        if task.result is None and task.data is None:
            task.result = _migrate(task, options, budget)  # not read: reported at once, in-process
        if task.result is not None and on_result:
            on_result(task.result)
    misses = [task for task in tasks if task.result is None]
    if not misses:
        yield from (task.result for task in tasks)
        return
    from concurrent.futures import ProcessPoolExecutor  # here: 0.01 s of start-up that one file does not need

    from migrate.runner import migrate_bytes
    futures: dict[int, Future] = {}
    with ProcessPoolExecutor(max_workers=min(jobs, len(misses))) as pool:
        for task in sorted(misses, key=lambda t: len(t.data), reverse=True):
            future = pool.submit(migrate_bytes, task.path, task.data, options, budget)
            if on_result:
                future.add_done_callback(lambda done, task=task: on_result(_outcome(task, done)))
            futures[id(task)] = future
        for task in tasks:
            if task.result is not None:
                yield task.result
            else:
                yield _finish(task, _outcome(task, futures[id(task)]), cache)


def _outcome(task: _Task, future: Future) -> FileResult:
    """The worker's result; a worker that died (killed from outside) fails its files, not the run."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        return future.result()
    except BrokenProcessPool as error:
        return FileResult(task.path, "failed", reason=f"internal error: the worker process stopped ({error}); "
                                                      "file left untouched")
