"""Result objects shared by the transforms, the runner and the reports.

They are small frozen dataclasses so that results cross process-pool boundaries (pickling) unchanged.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Severity = Literal["info", "warning", "error"]
Status = Literal["changed", "unchanged", "skipped", "failed"]
Level = Literal["tf2", "wrapped", "compat", "tf1", "none"]


@dataclass(frozen=True)
class Finding:
    """One thing a transform did, or could not do, at a place in a file."""

    code: str
    line: int
    col: int
    severity: Severity
    message: str
    fixed: bool

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class FileResult:
    """What happened to one file. `new_source` is None unless status is 'changed'."""

    path: str
    status: Status
    level: Level = "none"
    reason: str = ""
    findings: tuple[Finding, ...] = ()
    old_source: str | None = field(default=None, repr=False)
    new_source: str | None = field(default=None, repr=False)
    # Per-cell diffs for notebooks: [(cell label, old, new)]
    cells: tuple[tuple[str, str, str], ...] = field(default=(), repr=False)
    new_bytes: bytes | None = field(default=None, repr=False)
    # Session.run sites rewritten into functions: (legacy line, migrated function name). The
    # equivalence harness uses it to pair legacy fetches with migrated return values.
    run_sites: tuple[tuple[int, str], ...] = ()
    # TF1 API families the file uses: {family: {"sites", "tf2", "compat", "tf1"}} (migrate/families.py).
    families: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "status": self.status,
            "reason": self.reason,
            "level": self.level,
            "findings": [f.to_dict() for f in self.findings],
            "run_sites": [{"line": line, "function": name} for line, name in self.run_sites],
            "families": self.families,
        }
