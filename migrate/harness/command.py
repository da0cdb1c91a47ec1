"""`tf-migrate verify`: evidence that a migration computes what the legacy program computed.

Exit status: 0 every program equivalent; 1 some mismatch, failure to run or inconclusive program;
2 usage error or harness error. Progress goes to stderr, the summary table to stdout.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import traceback

import click

from migrate.harness.programs import UsageError, discover

EXIT_HARNESS_ERROR = 2
REPORT_SUFFIXES = (".json", ".md", ".markdown", ".html", ".htm")


@click.command("verify")
@click.argument("legacy", type=click.Path(exists=True))
@click.argument("migrated", required=False, type=click.Path(exists=True))
@click.option("--steps", type=click.IntRange(1), default=100, show_default=True,
              help="Values of the first N calls of each run site are compared (plus the last call).")
@click.option("--rtol", type=click.FloatRange(0), default=0.05, show_default=True,
              help="Relative tolerance after the first 10 steps.")
@click.option("--atol", type=click.FloatRange(0), default=1e-5, show_default=True,
              help="Absolute tolerance (alone for the first 10 steps).")
@click.option("--device", type=click.Choice(["auto", "cpu", "gpu"]), default="auto", show_default=True,
              help="cpu hides GPUs from both sides; gpu requires one.")
@click.option("--legacy-python", type=click.Path(exists=True, dir_okay=False),
              help="Interpreter for the legacy side (e.g. one with a real TF 1.x).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False),
              help="Also write a report: .json, .md or .html by suffix.")
@click.option("--timeout", type=click.FloatRange(1), default=600.0, show_default=True,
              help="Seconds each side of each program may run.")
@click.option("--memory-limit", type=click.FloatRange(64), default=None,
              help="MiB of resident memory each side may use [default: half of this machine's].")
@click.option("--sites", "sites_path", type=click.Path(exists=True, dir_okay=False),
              help="Run-site map of a hand-migrated program [default: MIGRATED's .sites.json beside it].")
@click.option("--keep-temp", is_flag=True, help="Keep the temporary folder (side outputs, migrated code).")
@click.option("--workdir-limit", type=click.FloatRange(0), default=512.0, show_default=True,
              help="MiB: each side runs in its own copy of the current directory if it holds no more "
                   "(else of the program's folder, else an empty one).")
@click.option("--aligned-randomness/--independent-randomness", default=True, show_default=True,
              help="Seed each random op from where the program creates it, the same on both sides, so that "
                   "randomness-affected values can be compared.")
def verify(legacy, migrated, steps, rtol, atol, device, legacy_python, report_path, timeout,
           memory_limit, sites_path, keep_temp, workdir_limit, aligned_randomness) -> None:
    """Run LEGACY and its migration with the same weights and inputs; compare outputs and speed.

    LEGACY is a TF1 program or a folder of them. Without MIGRATED each program is migrated first.
    """
    # Imported here: NumPy and the comparison code are not needed by the other tf-migrate commands.
    from migrate.harness.report import build_report, summary_table, write_report
    from migrate.harness.tolerance import Tolerance
    from migrate.harness.verify import Settings, default_memory_mb

    if device == "gpu" and os.environ.get("CUDA_VISIBLE_DEVICES", "unset").strip() in ("", "-1"):
        raise click.UsageError("--device gpu, but CUDA_VISIBLE_DEVICES hides every GPU")
    if report_path and not report_path.lower().endswith(REPORT_SUFFIXES):
        raise click.UsageError("--report must end in .json, .md or .html")
    try:
        programs = discover(legacy, migrated, sites_path)
    except UsageError as error:
        raise click.UsageError(str(error)) from error
    if not programs:
        raise click.UsageError(f"no Python programs in {legacy}")
    settings = Settings(steps=steps, tolerance=Tolerance(atol=atol, rtol=rtol), device=device,
                        legacy_python=os.path.abspath(legacy_python) if legacy_python else None,
                        timeout_s=timeout, memory_mb=memory_limit or default_memory_mb(),
                        workdir=os.getcwd(), workdir_limit_mb=workdir_limit, aligned_randomness=aligned_randomness)
    work_root = tempfile.mkdtemp(prefix="tf-migrate-verify-")
    try:
        report = build_report(_verify_all(programs, settings, work_root), settings.to_dict())
    except Exception:  # a bug in the harness itself, not in a program under test
        click.echo("tf-migrate verify: internal error\n" + traceback.format_exc(), err=True)
        sys.exit(EXIT_HARNESS_ERROR)
    finally:
        if keep_temp:
            click.echo(f"temporary files kept in {work_root}", err=True)
        else:
            shutil.rmtree(work_root, ignore_errors=True)
    click.echo(summary_table(report))
    if report_path:
        write_report(report, report_path)
        click.echo(f"report written to {report_path}", err=True)
    # sys.exit, not ctx.exit: `tf-migrate` runs click with standalone_mode=False, which would
    # swallow the status of a click Exit.
    sys.exit(report["summary"]["exit_code"])


def _verify_all(programs, settings, work_root: str) -> list[dict]:
    from migrate.harness.verify import verify_program

    results = []
    for number, program in enumerate(programs, 1):
        click.echo(f"[{number}/{len(programs)}] {program.name} ...", err=True)
        result = verify_program(program, settings, work_root)
        click.echo(f"    {result['verdict']}: {result['reason']}", err=True)
        workdir = result.get("working_directory") or {}
        if workdir.get("note"):
            click.echo(f"    working directory: {workdir['note']}", err=True)
        for note in result.get("notes", []):
            if note.startswith("the migrated program ran in mixed precision"):
                click.echo(f"    {note}", err=True)
        results.append(result)
    return results
