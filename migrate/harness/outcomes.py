"""Comparing the test outcomes of a unittest / `tf.test` program's two sides.

A test program is judged by its tests (each side records every test's outcome by test id:
`side_common.TestOutcomes`) as well as by the values its run sites compute: the same test ids with the
same outcomes (pass, fail, error, skip...) on both sides agree; a test whose outcome differs, or that
ran on one side only, is a mismatch naming it. A test failing the same way on both sides agrees (the
migration kept the program's behaviour), and the report's notes say that it failed.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

MISSING = "not run"


@dataclass(frozen=True)
class TestComparison:
    __test__ = False  # not a pytest test class
    test: str
    legacy: str
    migrated: str
    status: str  # match or mismatch
    detail: str | None  # the first line of the failure, on the side(s) that did not pass

    def to_dict(self) -> dict:
        return asdict(self)


def compare_tests(legacy: dict | None, migrated: dict | None) -> list[TestComparison]:
    """One comparison per test id that ran on either side, in id order; empty for non-test programs."""
    legacy, migrated = legacy or {}, migrated or {}
    legacy_outcomes, migrated_outcomes = legacy.get("outcomes", {}), migrated.get("outcomes", {})
    details = dict(legacy.get("details", {}), **migrated.get("details", {}))
    compared = []
    for test in sorted(set(legacy_outcomes) | set(migrated_outcomes)):
        before, after = legacy_outcomes.get(test, MISSING), migrated_outcomes.get(test, MISSING)
        compared.append(TestComparison(test, before, after, "match" if before == after else "mismatch",
                                       details.get(test)))
    return compared


def mismatch_reason(mismatched: list[dict]) -> str:
    """`tests differ: T1 (legacy pass, migrated fail: AssertionError: ...), T2 (...)`."""
    described = []
    for item in mismatched:
        detail = f": {item['detail']}" if item.get("detail") else ""
        described.append(f"{item['test']} (legacy {item['legacy']}, migrated {item['migrated']}{detail})")
    return "tests differ: " + ", ".join(described)


def notes(tests: list[dict]) -> list[str]:
    """A sentence for the report when tests ran: how many agree, and which fail on both sides."""
    if not tests:
        return []
    agreeing = [item for item in tests if item["status"] == "match"]
    failing = [item["test"] for item in agreeing if item["legacy"] in ("fail", "error")]
    found = [f"tests: {len(agreeing)} of {len(tests)} have the same outcome on both sides"]
    if failing:
        found.append("tests failing on both sides (same outcome, so not a mismatch): " + ", ".join(failing))
    return found
