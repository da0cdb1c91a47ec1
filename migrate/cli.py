"""The `tf-migrate` command line.

Exit codes: `diff` 0 nothing would change, 1 something would change; `apply` 0 every needed change was
written, 1 some file failed or was refused; every command 2 on a usage or internal error. Diffs and
machine output go to stdout; findings, progress and summaries to stderr.
"""
from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
from pathlib import Path

import click

from migrate import __version__
from migrate.config import ConfigError, load_config
from migrate.diffs import colorize, file_diff
from migrate.discovery import discover
from migrate.findings import FileResult
from migrate.cache import ResultCache, default_cache_dir
from migrate.options import (DEFAULT_FILE_MEMORY_MB, DEFAULT_FILE_TIMEOUT_S, DEFAULT_MAX_BYTES, Budget,
                             Options)
from migrate.pipeline import migrate_files
from migrate.progress import Progress
from migrate.report import Report, render_file_findings, render_summary, write_report
from migrate.tree import TreeError, write_results_in_place, write_tree

EXIT_CLEAN, EXIT_CHANGES, EXIT_ERROR = 0, 1, 2


def _codes(_ctx, _param, values) -> tuple[str, ...]:
    """--select/--ignore take comma-separated code prefixes, repeatable; config gives a list."""
    if isinstance(values, str):
        values = (values,)
    return tuple(code.strip().upper() for value in values or () for code in value.split(",") if code.strip())


def common_options(command):
    options = [
        click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True)),
        click.option("--report", "report_path", type=click.Path(dir_okay=False),
                     help="Also write a report: .json or .md by suffix."),
        click.option("-j", "--jobs", type=click.IntRange(1), default=1, show_default=True,
                     help="Worker processes."),
        click.option("--select", multiple=True, callback=_codes, help="Only these transform codes (prefixes)."),
        click.option("--ignore", multiple=True, callback=_codes, help="Skip these transform codes (prefixes)."),
        click.option("--exclude", multiple=True, help="Glob patterns of files or folders to leave out."),
        click.option("--unsafe", is_flag=True, help="Also run transforms marked unsafe."),
        click.option("--max-bytes", type=click.IntRange(1), default=DEFAULT_MAX_BYTES, show_default=True,
                     help="Skip files larger than this."),
        click.option("--file-timeout", type=click.FloatRange(0), default=DEFAULT_FILE_TIMEOUT_S, show_default=True,
                     help="Seconds one file may take; a file over it is skipped with the reason (0: no limit)."),
        click.option("--file-memory", type=click.IntRange(0), default=DEFAULT_FILE_MEMORY_MB, show_default=True,
                     help="MB of memory one file may take; a file over it is skipped with the reason (0: no limit)."),
        click.option("--cache-dir", type=click.Path(file_okay=False),
                     help="Where results are cached [default: $TF_MIGRATE_CACHE_DIR, else ~/.cache/tf-migrate]."),
        click.option("--no-cache", is_flag=True, help="Neither read nor write cached results."),
        click.option("-q", "--quiet", is_flag=True,
                     help="Only the summary on stderr: no per-file findings, no progress line."),
        click.option("--jit", type=click.Choice(["off", "auto", "on"]), default="off", show_default=True,
                     help="XLA for generated step functions (TFM302): on adds jit_compile=True; auto "
                          "leaves it to measurement (tf-migrate verify)."),
        click.option("--mixed-precision", type=click.Choice(["off", "auto", "on"]), default="off",
                     show_default=True,
                     help="Mixed precision for Keras-layer models (TFM303): auto decides at run time "
                          "(float16/bfloat16 on GPUs with Tensor Cores, float32 elsewhere); on always "
                          "uses mixed_float16."),
        click.option("--input-pipeline", type=click.Choice(["feed", "tf.data"]), default="feed",
                     show_default=True,
                     help="Minibatches made in Python (sliced from NumPy arrays, generators, next_batch "
                          "helpers): fed as they are, or read from tf.data with prefetch (TFM304, TFM307)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


class _Commands(click.Group):
    """A group whose harness commands are imported when run or listed: `diff` and `apply` do not
    pay for the equivalence harness's imports at start-up."""

    LAZY = {"verify": "migrate.harness.command", "tune": "migrate.harness.tune_command"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.LAZY and name not in self.commands:
            self.add_command(getattr(importlib.import_module(self.LAZY[name]), name))
        return super().get_command(ctx, name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tf-migrate")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Migrate TensorFlow 1.x code to idiomatic TensorFlow 2, and prove it computes the same thing."""
    try:
        config = load_config(Path.cwd())
    except ConfigError as error:
        raise click.UsageError(f"bad configuration: {error}") from error
    ctx.default_map = {"diff": config, "apply": config}


def _run(paths, select, ignore, exclude, unsafe, max_bytes, jobs, jit="off", mixed_precision="off",
         input_pipeline="feed", run_settings: dict | None = None) -> list[FileResult]:
    run_settings = run_settings or {}
    files = discover(tuple(paths), tuple(exclude))
    # asking for XLA or mixed precision selects its (unsafe) transform, and only that one
    asked = {"TFM302"} if jit == "on" else set()
    asked |= {"TFM303"} if mixed_precision != "off" else set()
    if asked and not select:
        from transforms import all_transforms
        select = tuple(t.CODE for t in all_transforms() if t.SAFETY == "safe" or t.CODE in asked)
    options = Options(select=select, ignore=ignore, unsafe=unsafe, max_bytes=max_bytes,
                      settings=(("jit", jit), ("mixed_precision", mixed_precision),
                                ("input_pipeline", input_pipeline)))
    budget = Budget(run_settings.get("file_timeout") or None, run_settings.get("file_memory") or None)
    cache = _cache(run_settings.get("cache_dir"), run_settings.get("no_cache", False))
    progress = Progress(len(files), enabled=False if run_settings.get("quiet") else None)
    try:
        return list(migrate_files(files, options, jobs, cache, budget, lambda result: progress.advance(result.path)))
    finally:
        progress.close()


def _cache(cache_dir: str | None, no_cache: bool) -> ResultCache | None:
    """The result cache the options ask for: --no-cache, else --cache-dir, else the default folder."""
    if no_cache:
        return None
    directory = Path(cache_dir) if cache_dir else default_cache_dir()
    return ResultCache(directory) if directory else None


def _run_settings(file_timeout, file_memory, cache_dir, no_cache, quiet) -> dict:
    """How the run goes (not what it produces): budget, cache, progress."""
    return {"file_timeout": file_timeout, "file_memory": file_memory, "cache_dir": cache_dir,
            "no_cache": no_cache, "quiet": quiet}


def _finish(command: str, results: list[FileResult], report_path: str | None, quiet: bool) -> Report:
    report = Report(command, tuple(results))
    if not quiet:
        for result in results:
            for line in render_file_findings(result):
                click.echo(line, err=True)
    click.echo(render_summary(report), err=True)
    if report_path:
        write_report(report, report_path)
        click.echo(f"tf-migrate: report written to {report_path}", err=True)
    return report


def _exit_on_internal_errors(results: list[FileResult]) -> None:
    """A bug of ours in any file outranks "changes" (black does the same): exit 2."""
    if any(r.status == "failed" and r.reason.startswith("internal error") for r in results):
        click.echo("tf-migrate: internal error in at least one file (see above); please report it", err=True)
        sys.exit(EXIT_ERROR)


@cli.command()
@common_options
@click.option("--color/--no-color", default=None, help="Color the diff (default: when stdout is a terminal).")
def diff(paths, report_path, jobs, select, ignore, exclude, unsafe, max_bytes, file_timeout, file_memory,
         cache_dir, no_cache, quiet, jit, mixed_precision, input_pipeline, color) -> None:
    """Show what would change, as unified diffs on stdout. Writes nothing."""
    results = _run(paths, select, ignore, exclude, unsafe, max_bytes, jobs, jit, mixed_precision, input_pipeline,
                   _run_settings(file_timeout, file_memory, cache_dir, no_cache, quiet))
    use_color = sys.stdout.isatty() if color is None else color
    for result in results:
        if result.status == "changed":
            text = file_diff(result)
            click.echo(colorize(text) if use_color else text, nl=False)
    _finish("diff", results, report_path, quiet)
    _exit_on_internal_errors(results)
    sys.exit(EXIT_CHANGES if any(r.status == "changed" for r in results) else EXIT_CLEAN)


@cli.command()
@common_options
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="Write the migrated tree into this folder instead of in place.")
@click.option("--force", is_flag=True, help="Write in place even over uncommitted changes; allow a non-empty --out.")
def apply(paths, report_path, jobs, select, ignore, exclude, unsafe, max_bytes, file_timeout, file_memory,
          cache_dir, no_cache, quiet, jit, mixed_precision, input_pipeline, out_dir, force) -> None:
    """Write the migration: in place, or into --out DIR."""
    results = _run(paths, select, ignore, exclude, unsafe, max_bytes, jobs, jit, mixed_precision, input_pipeline,
                   _run_settings(file_timeout, file_memory, cache_dir, no_cache, quiet))
    try:
        if out_dir:
            results = write_tree(tuple(paths), results, Path(out_dir), force, tuple(exclude))
        else:
            results = write_results_in_place(results, force)
    except TreeError as error:
        raise click.UsageError(str(error)) from error
    _finish("apply", results, report_path, quiet)
    _exit_on_internal_errors(results)
    sys.exit(EXIT_CHANGES if any(r.status == "failed" for r in results) else EXIT_CLEAN)


@cli.command("list")
def list_transforms() -> None:
    """List every transform with its code, fix safety and description."""
    from transforms import all_transforms

    for transform in all_transforms():
        info = transform.summary()
        click.echo(f"{info['code']}  {info['safety']:<6}  {info['name']:<32}  {info['description']}")


#: The cyclic garbage collector's first-generation threshold for a run (Python's default is 700).
#: A migration allocates millions of short-lived, acyclic tree nodes, so the default collects very
#: often and finds little: about 5% of a run's CPU on the development corpus
#: (benchmarks/gc_threshold.py). Forked pool workers inherit it.
GC_FIRST_GENERATION = 50_000


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    gc.set_threshold(GC_FIRST_GENERATION, *gc.get_threshold()[1:])
    # The interpreter's last act is a full collection over every object left, which finds nothing
    # worth freeing in a process about to end: 0.07 s of a 0.6 s one-file diff (benchmarks/
    # throughput.py). Frozen objects are left out of it; atexit handlers still run before.
    atexit.register(gc.freeze)
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.ClickException as error:
        error.show()
        sys.exit(EXIT_ERROR)
    except click.Abort:
        sys.exit(EXIT_ERROR)
    except SystemExit:
        raise
    except Exception as error:  # an internal error must still exit 2, not 1 (which means "changes")
        click.echo(f"tf-migrate: internal error: {type(error).__name__}: {error}", err=True)
        sys.exit(EXIT_ERROR)
