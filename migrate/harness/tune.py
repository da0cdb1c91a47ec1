"""`tf-migrate tune PROGRAM`: migrate a program several ways, verify each against one legacy run,
and keep the fastest variant the harness judges equivalent.

Variants (each a set of `migrate.runner.Options`):
  plain  one tf.function call per step (step-loop fusion, TFM301, left out)
  fused  the default migration: step loops run in one graph where provably safe
  xla    fused, and the step functions compiled with XLA (TFM302, `--jit on`)
  data   fused, and the minibatch loops left in Python fed from tf.data with prefetch (TFM304)
  mixed  fused, in mixed precision (TFM303, `--mixed-precision on`): tried by default only where a
         GPU is present (on a CPU float16 is slower); judged with widened tolerances

Speed is the harness's steady-state speedup over the legacy program (measured side by side in
each repeat; median over repeats). Only `equivalent` variants can win.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import dataclass, field

from migrate.harness.programs import Program, prepare
from migrate.harness.verify import Settings, run_legacy, verify_migrated
from migrate.runner import Options

VARIANTS = {
    "plain": Options(ignore=("TFM301",)),
    "fused": Options(),
    "xla": Options(unsafe=True, settings=(("jit", "on"),)),
    "data": Options(settings=(("input_pipeline", "tf.data"),)),
    "mixed": Options(unsafe=True, settings=(("mixed_precision", "on"),)),
}
CPU_VARIANTS = ("plain", "fused", "xla", "data")


def default_variants() -> tuple[str, ...]:
    """Every variant where an NVIDIA GPU is visible, all but mixed precision elsewhere."""
    return tuple(VARIANTS) if gpu_visible() else CPU_VARIANTS


def gpu_visible() -> bool:
    """Cheap check (no TensorFlow import): nvidia-smi lists a GPU that CUDA_VISIBLE_DEVICES does not hide."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", "unset").strip() in ("", "-1"):
        return False
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        listing = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return "GPU" in listing.stdout


@dataclass
class Trial:
    variant: str
    verdicts: list
    speedups: list
    migrated: str | None
    reason: str = ""
    legacy_rates: list = field(default_factory=list)    # steps/s of the legacy run each repeat compared with
    migrated_rates: list = field(default_factory=list)  # steps/s of this variant, same repeats

    @property
    def equivalent(self) -> bool:
        return bool(self.verdicts) and all(v == "equivalent" for v in self.verdicts)

    @property
    def speedup(self) -> float | None:
        return _median(self.speedups)

    @property
    def legacy_rate(self) -> float | None:
        return _median(self.legacy_rates)

    @property
    def migrated_rate(self) -> float | None:
        return _median(self.migrated_rates)


def _median(values: list) -> float | None:
    known = [value for value in values if value is not None]
    return statistics.median(known) if known else None


def tune(program: Program, settings: Settings, variants=tuple(VARIANTS), repeats: int = 3,
         work: str | None = None) -> list[Trial]:
    """Every variant's trial; the legacy program runs once per repeat, shared by the variants."""
    work = work or tempfile.mkdtemp(prefix="tune-")
    prepared = {name: prepare(program, tempfile.mkdtemp(dir=work), VARIANTS[name]) for name in variants}
    trials = {name: Trial(name, [], [], prepared[name].migrated, prepared[name].problem or "")
              for name in variants}
    for _ in range(repeats):
        legacy = run_legacy(program, settings, tempfile.mkdtemp(dir=work))
        for name in variants:
            if prepared[name].problem:
                trials[name].verdicts.append("failed")
                continue
            report = verify_migrated(program, prepared[name], legacy, settings, tempfile.mkdtemp(dir=work))
            trials[name].verdicts.append(report["verdict"])
            timing = report.get("timing") or {}
            trials[name].speedups.append(timing.get("speedup"))
            trials[name].legacy_rates.append((timing.get("legacy") or {}).get("steps_per_s"))
            trials[name].migrated_rates.append((timing.get("migrated") or {}).get("steps_per_s"))
            trials[name].reason = trials[name].reason or (report["reason"] if report["verdict"] != "equivalent"
                                                          else "")
    return list(trials.values())


def best(trials: list[Trial]) -> Trial | None:
    """The fastest equivalent trial (None when none is equivalent)."""
    usable = [t for t in trials if t.equivalent and t.speedup is not None]
    return max(usable, key=lambda t: t.speedup) if usable else None


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def table(trials: list[Trial], chosen: Trial | None) -> str:
    rows = [["variant", "equivalent", "legacy steps/s", "migrated steps/s", "speedup", "chosen", "note"]]
    for trial in trials:
        rows.append([trial.variant, "yes" if trial.equivalent else "/".join(sorted(set(trial.verdicts))),
                     _rate(trial.legacy_rate), _rate(trial.migrated_rate),
                     "-" if trial.speedup is None else f"{trial.speedup:.2f}x",
                     "*" if trial is chosen else "", trial.reason.splitlines()[0][:80] if trial.reason else ""])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])
