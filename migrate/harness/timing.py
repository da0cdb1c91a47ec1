"""Steady-state speed of a side and the speedup of the migration.

The step site is the legacy run site called most often (the training step) and its migrated
counterpart; legacy sites answered by one migrated function count as one stream of calls, as they are
compared. Warm-up calls are excluded: the first 10% of calls, at least one (graph building on the
legacy side, tracing on the migrated side). A step's time is measured from its call's start to the
next call's start, so the time between calls (the script's own Python, data feeding) counts as it
does for a user, and asynchronous GPU execution is not mistaken for instant steps; the harness's own
time in between (recording, determinism probes: measured per call by the sides) is subtracted, and
so is its total from a script's wall time.

The steady-state step time is the median of those step times, on both sides alike. A mean would
charge the steps with whatever else the script does once in a while between two of them: an
evaluation pass, a checkpoint written, and the first call of any other function (tracing on the
migrated side, where it costs far more than the legacy side's first `Session.run` of a new fetch),
all work the step site does not do. The median is the time of a typical step; a fused call's steps
(spread evenly over it) are all typical.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

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
    seconds = site.step_seconds(warmup)
    rate, span = None, None
    if len(seconds):
        typical, span = float(np.median(seconds)), float(seconds.sum())
        rate = 1.0 / typical if typical > 0 else None
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
