"""`tf-migrate tune PROGRAM`: try migration variants (fused or not, XLA or not) with the harness and
keep the fastest equivalent one (see `tune.py`). Prints the variant table; `--write FILE` saves the
chosen variant's migrated program. Exit status: 0 a variant was chosen, 1 none was equivalent."""
from __future__ import annotations

import shutil
import sys
import tempfile

import click


@click.command("tune")
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.option("--variants", default=None,
              help="Comma-separated variants: plain, fused, xla, data (tf.data input, TFM304), mixed "
                   "(mixed precision, TFM303) [default: all; mixed only where a GPU is visible].")
@click.option("--repeats", type=click.IntRange(1), default=3, show_default=True,
              help="Runs of each variant (speed: the median).")
@click.option("--write", "write_path", type=click.Path(dir_okay=False),
              help="Write the chosen variant's migrated program here.")
@click.option("--timeout", type=click.FloatRange(1), default=600.0, show_default=True,
              help="Seconds each side may run.")
def tune(program, variants, repeats, write_path, timeout) -> None:
    """Migrate PROGRAM several ways, verify each, and keep the fastest equivalent variant."""
    from migrate.harness import tune as tuning
    from migrate.harness.programs import Program
    from migrate.harness.verify import Settings

    chosen_variants = tuple(v for v in variants.split(",") if v) if variants else tuning.default_variants()
    unknown = sorted(set(chosen_variants) - set(tuning.VARIANTS))
    if unknown:
        raise click.UsageError(f"unknown variant(s): {', '.join(unknown)}")
    work, winner = tempfile.mkdtemp(prefix="tf-migrate-tune-"), None
    try:
        name = program.rsplit("/", 1)[-1]
        trials = tuning.tune(Program(name, program), Settings(timeout_s=timeout), chosen_variants, repeats, work)
        winner = tuning.best(trials)
        click.echo(tuning.table(trials, winner))
        if winner and write_path:
            shutil.copyfile(winner.migrated, write_path)
            click.echo(f"{winner.variant} variant written to {write_path}", err=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if winner else 1)
