"""The programs' own final answers: `RESULT <key> <value>` lines on stdout (a number or a JSON list),
compared key by key with the after-training tolerance."""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

import numpy as np

from migrate.harness.tolerance import Tolerance, compare_leaf

RESULT_LINE = re.compile(r"^RESULT\s+(\S+)\s+(.+?)\s*$")


def parse_results(stdout: str) -> dict[str, object]:
    """key -> value of every RESULT line (a later line with the same key wins)."""
    found = {}
    for line in stdout.splitlines():
        match = RESULT_LINE.match(line)
        if match:
            key, text = match.groups()
            try:
                found[key] = json.loads(text)
            except ValueError:
                found[key] = text
    return found


@dataclass
class ResultComparison:
    key: str
    legacy: object
    migrated: object
    status: str  # match, mismatch, advisory-match, advisory-mismatch, missing
    max_abs: float | None = None
    max_rel: float | None = None
    problem: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def compare_results(legacy: dict, migrated: dict, tolerance: Tolerance, is_advisory) -> list[ResultComparison]:
    """Compare every legacy RESULT key with the migrated program's value for it.

    `is_advisory(key)`: whether unaligned randomness, or a run whose ops TF1 did not order
    (ordering.py), had changed the state before the legacy program printed that key (a difference is
    then reported, but does not count as a mismatch).
    """
    compared = []
    for key, expected in legacy.items():
        if key not in migrated:
            compared.append(ResultComparison(key, expected, None, "missing",
                                             problem="the migrated program printed no such RESULT line"))
            continue
        actual = migrated[key]
        try:
            errors = compare_leaf(np.asarray(expected), np.asarray(actual), tolerance.atol, tolerance.rtol,
                                  normwise=True)
        except (TypeError, ValueError) as error:
            compared.append(ResultComparison(key, expected, actual, "mismatch", problem=str(error)))
            continue
        status = ("advisory-" if is_advisory(key) else "") + ("match" if errors.close else "mismatch")
        compared.append(ResultComparison(key, expected, actual, status, errors.max_abs, errors.max_rel,
                                         errors.problem))
    return compared
