"""Which programs to verify, and their migrated versions.

`verify LEGACY [MIGRATED]`: LEGACY is a program or a folder of programs (its top-level `*.py`, not
`_private.py` helpers). Each program's migrated version is, in order:
  * given: MIGRATED itself for a file; for a folder, `MIGRATED/<same name>`, or `<name>_tf2.py` for
    a `<name>_legacy.py` program;
  * beside it: `<name>_tf2.py` next to a `<name>_legacy.py` (a hand-migrated pair);
  * otherwise made here by `migrate.runner.migrate_path` into the temporary folder, with the run-site
    map the migration reports.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from migrate.harness.pairing import (fused_map, line_map, load_fused_map, load_site_map, rewritten_lines,
                                     sidecar_path, write_site_map)

LEGACY_SUFFIX, MIGRATED_SUFFIX = "_legacy.py", "_tf2.py"


class UsageError(Exception):
    """LEGACY / MIGRATED arguments that do not fit together."""


@dataclass(frozen=True)
class Program:
    name: str
    legacy: str
    migrated: str | None = None  # None: migrate it here
    sites: str | None = None
    problem: str | None = None

    def __post_init__(self) -> None:
        # The sides run in their own temporary working folders: relative paths would not resolve.
        for name in ("legacy", "migrated", "sites"):
            value = getattr(self, name)
            if value:
                object.__setattr__(self, name, os.path.abspath(value))


@dataclass
class Prepared:
    """A program ready to run on both sides."""

    migrated: str | None
    file_as: str | None  # where the migrated program believes it lives (the original's place)
    site_map: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict)
    migration: dict | None = None
    problem: str | None = None
    fused: dict = field(default_factory=dict)  # multi-step function -> its step function (TFM301)
    rewritten: frozenset = frozenset()  # legacy lines `lines` maps to a changed line (pairing.rewritten_lines)


def discover(legacy: str, migrated: str | None, sites: str | None) -> list[Program]:
    """The programs named by the command's arguments."""
    legacy = os.path.abspath(legacy)
    migrated = os.path.abspath(migrated) if migrated else None
    if os.path.isfile(legacy):
        if migrated and not os.path.isfile(migrated):
            raise UsageError("LEGACY is a file, so MIGRATED must be a file too")
        return [_program(os.path.basename(legacy), legacy, migrated, sites)]
    if migrated and not os.path.isdir(migrated):
        raise UsageError("LEGACY is a folder, so MIGRATED must be a folder too")
    if sites:
        raise UsageError("--sites names the run-site map of one program; in batch mode put "
                         "<migrated>.sites.json beside each migrated program")
    names = sorted(name for name in os.listdir(legacy) if _is_program(legacy, name))
    return [_program(name, os.path.join(legacy, name), _counterpart(legacy, name, migrated), None,
                     batch=migrated is not None) for name in names]


def _is_program(folder: str, name: str) -> bool:
    if not name.endswith(".py") or name.startswith("_") or not os.path.isfile(os.path.join(folder, name)):
        return False
    pair_legacy = name[: -len(MIGRATED_SUFFIX)] + LEGACY_SUFFIX
    return not (name.endswith(MIGRATED_SUFFIX) and os.path.isfile(os.path.join(folder, pair_legacy)))


def _counterpart(folder: str, name: str, migrated: str | None) -> str | None:
    twin = name[: -len(LEGACY_SUFFIX)] + MIGRATED_SUFFIX if name.endswith(LEGACY_SUFFIX) else None
    for home, candidate in ((migrated, name), (migrated, twin), (folder, twin)):
        if home and candidate and os.path.isfile(os.path.join(home, candidate)):
            return os.path.join(home, candidate)
    return None


def _program(name, legacy, migrated, sites, batch=False) -> Program:
    problem = "no migrated version of it in MIGRATED" if batch and migrated is None else None
    if migrated and not sites and os.path.isfile(sidecar_path(migrated)):
        sites = sidecar_path(migrated)
    return Program(name, legacy, migrated, sites, problem)


def prepare(program: Program, work_dir: str, options=None) -> Prepared:
    """Find or make the migrated program, and how its run sites pair with the legacy ones.
    `options` (`migrate.runner.Options`): how to migrate it here, when it is made here."""
    if program.problem:
        return Prepared(None, None, problem=program.problem)
    legacy_source = _read(program.legacy)
    if program.migrated:
        site_map = load_site_map(program.sites) if program.sites else {}
        fused = load_fused_map(program.sites) if program.sites else {}
        migrated_source = _read(program.migrated)
        return Prepared(program.migrated, None, site_map, line_map(legacy_source, migrated_source), fused=fused,
                        rewritten=rewritten_lines(legacy_source, migrated_source))
    return _migrate_here(program, legacy_source, work_dir, options)


def _migrate_here(program: Program, legacy_source: str, work_dir: str, options=None) -> Prepared:
    # The rewrite machinery is needed only in this case.
    from migrate.runner import Options, migrate_path
    from transforms.common.qualnames import mentions_tensorflow

    result = migrate_path(program.legacy, options or Options())
    migration = {"status": result.status, "level": result.level, "reason": result.reason,
                 "findings": len(result.findings), "run_sites": len(result.run_sites)}
    if result.status == "failed" or (result.status == "skipped" and mentions_tensorflow(legacy_source)):
        return Prepared(None, None, migration=migration, problem=f"migration did not succeed: {result.reason}")
    folder = os.path.join(work_dir, "migrated")
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, os.path.basename(program.legacy))
    changed = result.status == "changed"
    new_source = result.new_source if changed else legacy_source
    if not changed:
        with open(program.legacy, "rb") as handle:
            new_bytes = handle.read()
    else:
        new_bytes = result.new_bytes if result.new_bytes is not None else new_source.encode("utf-8")
    with open(target, "wb") as handle:
        handle.write(new_bytes)
    fused = fused_map(new_source, [name for _, name in result.run_sites])
    write_site_map(sidecar_path(target), result.run_sites, fused)
    return Prepared(target, program.legacy, dict(result.run_sites), line_map(legacy_source, new_source),
                    migration, fused=fused, rewritten=rewritten_lines(legacy_source, new_source))


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()
