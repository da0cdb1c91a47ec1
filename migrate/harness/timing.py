"""Steady-state speed of a side and the speedup of the migration.

The step site is the legacy run site called most often (the training step) and its migrated
counterpart. Warm-up calls are excluded: the first 10% of calls, at least one (graph building on the
legacy side, tracing on the migrated side). Steps per second are measured between call starts, so
the time between calls (the script's own Python, data feeding) counts as it does for a user, and
asynchronous GPU execution is not mistaken for instant steps. The harness's own time in that window
(recording, determinism probes: measured per call by the sides) is subtracted, and so is its total
from a script's wall time.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from migrate.harness.records import SiteData

WARMUP_FRACTION = 0.1
# Below these, a steady-state rate says little (timer noise, a busy machine): flagged as indicative.
RELIABLE_STEPS, RELIABLE_SECONDS = 20, 1.0


@dataclass(frozen=True)
class SideTiming:
    wall_s: float | None
    step_site: str | None
    steps: int
    warmup_steps: int
    steps_per_s: float | None
    instrumentation_s: float | None
    steady_s: float | None = None  # measured steady-state window, harness time removed

    @property
    def reliable(self) -> bool:
        return (self.steps - self.warmup_steps >= RELIABLE_STEPS
                and (self.steady_s or 0.0) >= RELIABLE_SECONDS)

    def to_dict(self) -> dict:
        return asdict(self)


def warmup_count(calls: int) -> int:
    return max(1, int(calls * WARMUP_FRACTION))


def side_timing(site: SiteData | None, wall_s: float | None, instrumentation_s: float | None) -> SideTiming:
    """Steady-state steps/s of one side at its step site (None with fewer than three calls)."""
    if site is None:
        return SideTiming(wall_s, None, 0, 0, None, instrumentation_s)
    warmup = warmup_count(site.calls)
    steady = site.starts[warmup:]
    rate, span = None, None
    if len(steady) >= 2:
        span = float(steady[-1] - steady[0]) - site.harness_seconds(warmup, site.calls - 1)
        rate = (len(steady) - 1) / span if span > 0 else None
    return SideTiming(wall_s, site.key, site.calls, warmup, rate, instrumentation_s, span)


def _program_seconds(timing: SideTiming) -> float | None:
    """The script's wall time without the harness's own recording and probing."""
    if not timing.wall_s:
        return None
    return max(timing.wall_s - (timing.instrumentation_s or 0.0), 1e-9)


def speedup(legacy: SideTiming, migrated: SideTiming) -> tuple[float | None, str]:
    """legacy time / migrated time: per steady-state step when both have one, else whole-script wall time."""
    if legacy.steps_per_s and migrated.steps_per_s:
        basis = "steady-state step time"
        if not (legacy.reliable and migrated.reliable):
            basis += (f" (indicative only: under {RELIABLE_STEPS} steady steps or {RELIABLE_SECONDS:g} s "
                      "on a side)")
        return migrated.steps_per_s / legacy.steps_per_s, basis
    legacy_wall, migrated_wall = _program_seconds(legacy), _program_seconds(migrated)
    if legacy_wall and migrated_wall:
        return legacy_wall / migrated_wall, "script wall time"
    return None, "not measured"
