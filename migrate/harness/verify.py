"""Verifying one program: migrate (if needed), run both sides, compare, time, and judge.

Verdicts: `equivalent` (every strict comparison passed, at least one was made), `mismatch` (some
value, call count or RESULT line differs), `inconclusive` (nothing could be compared strictly),
`failed` (the migration or a side did not run to the end), `error` (the harness itself could not
do its job: an unreadable run-site map, a side that could not start, no GPU under --device gpu).
"""
from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass, field, replace

from migrate.harness import judge
from migrate.harness.launcher import SideRun, run_side
from migrate.harness.pairing import SiteMapError
from migrate.harness.programs import Prepared, Program, prepare
from migrate.harness.timing import WARMUP_FRACTION
from migrate.harness.tolerance import Tolerance
from migrate.harness.workdir import DEFAULT_LIMIT_MB, WorkdirPlan, materialise, plan_workdir, relocate

HERE = os.path.dirname(os.path.abspath(__file__))
LEGACY_ENTRY = os.path.join(HERE, "legacy_side.py")
MIGRATED_ENTRY = os.path.join(HERE, "migrated_side.py")
PROJECT_ROOT = os.path.dirname(os.path.dirname(HERE))


def default_memory_mb() -> float:
    """Half the machine's memory: room for the harness and the other side's leftovers."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 20
    except (ValueError, OSError):
        total = 16384.0
    return total / 2


@dataclass(frozen=True)
class Settings:
    steps: int = 100
    tolerance: Tolerance = field(default_factory=Tolerance)
    device: str = "auto"
    legacy_python: str | None = None
    timeout_s: float = 600.0
    memory_mb: float = field(default_factory=default_memory_mb)
    seed: int = 0
    args: tuple[str, ...] = ()  # command-line arguments given to both programs
    # Each side runs in its own copy of this folder (the CLI gives the one verify was run from);
    # None: in an empty folder. See workdir.py.
    workdir: str | None = None
    workdir_limit_mb: float = DEFAULT_LIMIT_MB
    # Random ops seeded by creation site on both sides (random_streams.py); off: each side's own.
    aligned_randomness: bool = True

    def to_dict(self) -> dict:
        return {"steps": self.steps, "tolerance": self.tolerance.to_dict(), "device": self.device,
                "legacy_python": self.legacy_python, "timeout_s": self.timeout_s,
                "memory_limit_mb": round(self.memory_mb), "seed": self.seed,
                "args": list(self.args), "workdir": self.workdir, "workdir_limit_mb": self.workdir_limit_mb,
                "aligned_randomness": self.aligned_randomness}


def side_env(settings: Settings, legacy: bool) -> dict:
    """Environment of a side: same hash seed, no bytecode written beside the user's files."""
    env = dict(os.environ, PYTHONHASHSEED=str(settings.seed), PYTHONDONTWRITEBYTECODE="1")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if settings.device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = "-1"
    if legacy:
        env["TF_USE_LEGACY_KERAS"] = "1"
    else:
        env.pop("TF_USE_LEGACY_KERAS", None)
    return env


def verify_program(program: Program, settings: Settings, work_root: str | None = None) -> dict:
    """The report of one program (see SCHEMA.md). Never raises for a program's own failures."""
    work = tempfile.mkdtemp(prefix="verify-", dir=work_root)
    report = judge.empty_report(program)
    try:
        prepared = prepare(program, work)
    except SiteMapError as error:
        return judge.stop(report, "error", str(error))
    report["migrated_path"] = prepared.migrated
    report["migration"] = prepared.migration
    if prepared.problem:
        return judge.stop(report, "failed", prepared.problem)
    legacy = run_legacy(program, settings, work)
    report = verify_migrated(program, prepared, legacy, settings, work, report)
    if not _randomness_left_it_open(report, settings):
        return report
    return _verify_with_independent_randomness(program, prepared, settings, work, report)


def _randomness_left_it_open(report: dict, settings: Settings) -> bool:
    """Whether aligned random streams were tried, did not reproduce the program's randomness, and
    left nothing strictly comparable."""
    randomness = report.get("randomness") or {}
    return (settings.aligned_randomness and report["verdict"] == "inconclusive"
            and randomness.get("aligned") is False and not randomness.get("reproduced"))


def _verify_with_independent_randomness(program: Program, prepared: Prepared, settings: Settings, work: str,
                                        aligned: dict) -> dict:
    """Both sides again, each with its own random streams, so that the legacy side can re-run its
    random sites to prove which calls do not depend on the draws (a re-run would have shifted aligned
    streams). Its verdict stands when it reaches one; otherwise the aligned attempt's report does."""
    independent = replace(settings, aligned_randomness=False)
    again = os.path.join(work, "independent")
    os.makedirs(again)
    report = judge.empty_report(program)
    report["migration"] = aligned["migration"]
    report = verify_migrated(program, prepared, run_legacy(program, independent, again), independent, again,
                             report)
    if report["verdict"] not in ("equivalent", "mismatch"):
        return aligned
    report["randomness"]["aligned_attempt"] = ("aligned random streams did not reproduce the program's "
                                               "randomness and left nothing strictly comparable; judged with "
                                               "each side's own streams and the legacy side's re-runs")
    return report


def verify_migrated(program: Program, prepared: Prepared, legacy: SideRun, settings: Settings, work: str,
                    report: dict | None = None) -> dict:
    """Given the legacy side's run, run the migrated side and judge (one legacy run can serve
    several migrated candidates)."""
    report = report or judge.empty_report(program)
    report["migrated_path"] = report["migrated_path"] or prepared.migrated
    report["working_directory"] = workdir_plan(program, settings, work).to_dict()
    report["sides"]["legacy"] = judge.side_summary(legacy)
    if legacy.status != "ok":
        return judge.stop(report, judge.failure_verdict(legacy), judge.failure_reason("legacy", legacy))
    migrated = run_migrated(program, prepared, legacy, settings, work)
    report["sides"]["migrated"] = judge.side_summary(migrated)
    if migrated.status != "ok":
        return judge.stop(report, judge.failure_verdict(migrated), judge.failure_reason("migrated", migrated))
    return judge.compare_runs(report, prepared, legacy, migrated, settings.tolerance)


def workdir_plan(program: Program, settings: Settings, work: str) -> WorkdirPlan:
    """What both sides' working folders are copies of (the same for both, decided the same way each
    time): the invocation directory, else the program's folder, else nothing. The harness's own
    temporary folders are never copied into them."""
    return plan_workdir(settings.workdir, os.path.dirname(program.legacy), settings.workdir_limit_mb,
                        exclude=harness_folders(work))


def harness_folders(work: str) -> tuple[str, str]:
    """This program's temporary folder and the batch's (its parent): never copied into a side."""
    work = os.path.abspath(work)
    return work, os.path.dirname(work)


def side_cwd(program: Program, settings: Settings, work: str, side_dir: str) -> tuple[WorkdirPlan, str]:
    """The side's working folder, made as planned, and the plan (to relocate the script into it)."""
    plan = workdir_plan(program, settings, work)
    return plan, materialise(plan, os.path.join(side_dir, "cwd"), exclude=harness_folders(work))


def run_legacy(program: Program, settings: Settings, work: str) -> SideRun:
    side_dir = os.path.join(work, "legacy")
    plan, cwd = side_cwd(program, settings, work, side_dir)
    config = {"script": relocate(program.legacy, plan, cwd), "steps": settings.steps, "seed": settings.seed,
              "device": settings.device, "args": list(settings.args), "aligned_randomness": settings.aligned_randomness,
              "legacy_runtime_root": None if settings.legacy_python else PROJECT_ROOT}
    return run_side(LEGACY_ENTRY, settings.legacy_python or sys.executable, config, side_dir,
                    settings.timeout_s, settings.memory_mb, side_env(settings, True), cwd)


def run_migrated(program: Program, prepared: Prepared, legacy: SideRun, settings: Settings, work: str) -> SideRun:
    side_dir = os.path.join(work, "migrated_run")
    plan, cwd = side_cwd(program, settings, work, side_dir)
    weights = os.path.join(legacy.out_dir, "weights.npz")
    config = {"script": relocate(prepared.migrated, plan, cwd), "file_as": relocate(prepared.file_as, plan, cwd),
              "steps": settings.steps, "seed": settings.seed, "device": settings.device,
              "args": list(settings.args), "fused": prepared.fused, "warmup_fraction": WARMUP_FRACTION,
              "aligned_randomness": settings.aligned_randomness, "legacy_script": program.legacy,
              "variables": legacy.data.result.get("variables"), "weights": weights if os.path.exists(weights) else None}
    return run_side(MIGRATED_ENTRY, sys.executable, config, side_dir, settings.timeout_s, settings.memory_mb,
                    side_env(settings, False), cwd)
