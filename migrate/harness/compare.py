"""Comparing a legacy run site with its migrated counterpart, call by call and fetch by fetch.

Fetches are paired by position after dropping `None` (ops fetched for their effect, such as a train
op, which a migrated function may return as None or leave out). Calls are paired by index: call k of
`sess.run` at line 33 against call k of `train_step`. Comparisons that unaligned randomness makes
meaningless (dropout in the fetched computation, or any call after a random op changed the weights)
are still measured and shown, but marked advisory: they never decide the verdict, unless every
randomness-affected value of the program agreed (`reproduced`: the harness gave both sides the same
random streams, or the randomness did not matter); they are then compared strictly like the rest.
"""
from __future__ import annotations

import bisect

from dataclasses import asdict, dataclass, field

import numpy as np

from migrate.harness.records import OPAQUE, SiteData
from migrate.harness.tolerance import Tolerance, compare_leaf


@dataclass
class FetchStats:
    """Errors of one fetch over the compared calls; advisory calls are kept apart."""

    index: int
    name: str
    compared: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    first_bad_step: int | None = None
    problem: str | None = None
    advisory: int = 0
    advisory_failures: int = 0
    advisory_max_abs: float = 0.0
    random_advisory: int = 0  # advisory through randomness alone (not through unordered writes)
    random_failures: int = 0

    def note(self, step: int, errors, strict: bool, random_advisory: bool = False) -> None:
        if not strict:
            self.advisory += 1
            self.advisory_failures += 0 if errors.close else 1
            self.advisory_max_abs = max(self.advisory_max_abs, errors.max_abs)
            if random_advisory:
                self.random_advisory += 1
                self.random_failures += 0 if errors.close else 1
            return
        self.compared += 1
        self.max_abs = max(self.max_abs, errors.max_abs)
        self.max_rel = max(self.max_rel, errors.max_rel)
        if not errors.close and self.first_bad_step is None:
            self.first_bad_step = step
            self.problem = errors.problem


@dataclass
class SiteComparison:
    legacy_line: int | None
    legacy_lines: list
    migrated: str | None
    paired_by: str
    legacy_calls: int
    migrated_calls: int
    status: str = "match"  # match, mismatch, advisory, unpaired, no-values
    fetches: list = field(default_factory=list)
    first_divergence: dict | None = None
    random_ops: list = field(default_factory=list)
    advisory_from_step: int | None = None
    inputs: str = "not recorded"
    notes: list = field(default_factory=list)
    unpaired_reason: str | None = None  # why an `unpaired` site's values were not compared
    legacy_module: str | None = None  # the program module holding the legacy lines; None: the script

    def to_dict(self) -> dict:
        return asdict(self)


def compare_site(legacy: SiteData, migrated: SiteData | None, paired_by: str, tolerance: Tolerance,
                 advisory_from: int | None, training_sequence: tuple = (), doubt: str | None = None,
                 unsettled: dict | None = None, reproduced: bool = False) -> SiteComparison:
    """Compare one paired site. `advisory_from`: first call index that randomness made advisory.
    `training_sequence`: the legacy program's global call numbers of the calls that changed its state
    (training steps), sorted: a call made after N of them is judged with step N's tolerance, as its
    values went through N steps of round-off (an evaluation after 30 training steps is not early).
    `doubt`: why the pairing is not certain; the site is then `unpaired` with that reason, never a
    mismatch, and so is one whose counterpart returns a different number of values.
    `unsettled`: fetch index -> (first advisory call, variable) for fetched values computed from a
    variable that unordered writes left unsettled (ordering.py).
    `reproduced`: every randomness-affected value of the program agreed, so randomness makes nothing
    advisory (`advisory_from` is then None)."""
    site = SiteComparison(legacy.line, legacy.lines, migrated.key if migrated else None, paired_by, legacy.calls,
                          migrated.calls if migrated else 0, random_ops=legacy.facts.get("random_ops", []),
                          advisory_from_step=advisory_from, legacy_module=legacy.module)
    if site.random_ops and legacy.has_values():
        site.notes.append(_random_note(site.random_ops, legacy, reproduced))
    if not legacy.has_values():
        site.status = "no-values"
        return site
    if migrated is None or doubt:
        return _unpaired(site, doubt or "no migrated counterpart")
    _compare_calls(site, legacy, migrated, tolerance, _strictness(legacy, advisory_from, reproduced),
                   training_sequence, unsettled or {})
    for index, (call, variable) in sorted((unsettled or {}).items()):
        if index < len(site.fetches) and call < legacy.calls:
            site.notes.append(f"{site.fetches[index].name} is computed from {variable}, which TF1 updates in an "
                              f"order its executor picks (unordered writes in one run): advisory from call {call}")
    if site.status == "unpaired":
        return site
    site.inputs = _compare_inputs(legacy, migrated)
    _settle(site, legacy, migrated)
    return site


def _unpaired(site: SiteComparison, reason: str) -> SiteComparison:
    """Mark a site whose values are not compared, saying why."""
    site.status, site.unpaired_reason = "unpaired", reason
    site.fetches = []
    site.notes.append(f"unpaired: {reason}: its fetches were not compared")
    return site


def _random_note(random_ops: list, legacy: SiteData, reproduced: bool) -> str:
    reached = "the fetched computation reaches random ops (" + ", ".join(random_ops) + "); "
    if reproduced:
        return reached + "compared strictly: every randomness-affected value of the program agreed"
    steady = sorted(legacy.facts.get("deterministic_calls", []))
    return reached + f"strictly compared only on calls a legacy re-run reproduced exactly: {steady or 'none'}"


def _strictness(legacy: SiteData, advisory_from: int | None, reproduced: bool = False):
    """Which call indices count for the verdict: before randomness changed the state and, for a
    site whose computation is random, only the calls the legacy side proved deterministic (all
    calls when the program's randomness was reproduced)."""
    deterministic = set(legacy.facts.get("deterministic_calls", []))
    random_site = bool(legacy.facts.get("random_ops")) and not reproduced

    def strict(step: int) -> bool:
        before_taint = advisory_from is None or step < advisory_from
        return before_taint and (not random_site or step in deterministic)

    return strict


def _compare_calls(site, legacy, migrated, tolerance, is_strict, training_sequence=(), unsettled=None) -> None:
    for step, legacy_leaves, migrated_leaves in _paired_calls(legacy, migrated):
        expected = [leaf for leaf in legacy_leaves if leaf is not None]
        actual = [leaf for leaf in migrated_leaves if leaf is not None]
        if not site.fetches:
            site.fetches = [FetchStats(i, _fetch_name(legacy, i)) for i in range(len(expected))]
        if len(expected) != len(actual):
            _unpaired(site, f"fetch structure differs: {migrated.key} returns {len(actual)} values where legacy "
                            f"fetches {len(expected)} (call {step}): not the same computation")
            return
        strict = is_strict(step)
        sequence = _sequence(legacy, step)
        trained = bisect.bisect_left(training_sequence, sequence) if sequence is not None else 0
        atol, rtol = tolerance.at_step(max(step, trained))
        for stats, want, got in zip(site.fetches, expected, actual):
            if OPAQUE in (_kind(want), _kind(got)):
                stats.problem = stats.problem or "not an array: not compared"
                continue
            normwise = tolerance.normwise_at(max(step, trained))
            settled = step < (unsettled or {}).get(stats.index, (float("inf"), None))[0]
            errors = compare_leaf(want, got, atol, rtol, normwise)
            stats.note(step, errors, strict and settled, random_advisory=settled and not strict)


def _paired_calls(legacy: SiteData, migrated: SiteData):
    """(call index, legacy leaves, migrated leaves) for calls recorded on both sides, then the last."""
    common = sorted(set(legacy.values) & set(migrated.values))
    for step in common:
        yield step, legacy.values[step], migrated.values[step]
    final = legacy.calls - 1
    if legacy.calls == migrated.calls and final not in common and final >= 0:
        yield final, legacy.last, migrated.last


def _kind(leaf):
    return OPAQUE if isinstance(leaf, str) and leaf == OPAQUE else "array"


def _fetch_name(legacy: SiteData, index: int) -> str:
    """The legacy fetch behind the index-th non-None leaf, e.g. `Mean:0`."""
    kept = legacy.compared_positions()
    names = legacy.fetch_names or legacy.paths
    position = kept[index] if index < len(kept) else index
    return str(names[position]) if position < len(names) else f"#{index}"


def _compare_inputs(legacy: SiteData, migrated: SiteData) -> str:
    """Whether the migrated function received the data the legacy run fed, call by call."""
    steps = sorted(set(legacy.inputs) & set(migrated.inputs))
    if not steps:
        return "not recorded"
    for step in steps:
        offered = migrated.inputs[step]
        for fed in legacy.inputs[step]:
            if not any(_same_data(fed, arg) for arg in offered):
                return f"differ from call {step}: a fed value is not among the function's arguments"
    return f"same in {len(steps)} recorded calls"


def _same_data(first, second) -> bool:
    if first.shape != second.shape:
        return False
    if first.dtype.kind in "fiub" and second.dtype.kind in "fiub":
        return bool(np.array_equal(first.astype(np.float64), second.astype(np.float64), equal_nan=True))
    return bool(np.array_equal(first, second))


def _sequence(legacy: SiteData, step: int) -> int | None:
    """The legacy program's global call number of a site's call: orders divergences across sites."""
    return int(legacy.sequence[step]) if step < len(legacy.sequence) else None


def _settle(site: SiteComparison, legacy: SiteData, migrated: SiteData) -> None:
    """Set the site's status and first divergence from its fetch statistics."""
    if site.status == "mismatch":
        return
    if legacy.calls != migrated.calls:
        site.notes.append(f"called {migrated.calls} times where legacy ran {legacy.calls} times")
    bad = [stats for stats in site.fetches if stats.first_bad_step is not None]
    if bad:
        first = min(bad, key=lambda stats: (stats.first_bad_step, stats.index))
        site.status = "mismatch"
        site.first_divergence = {"step": first.first_bad_step, "fetch": first.index, "name": first.name,
                                 "problem": first.problem, "sequence": _sequence(legacy, first.first_bad_step)}
    elif legacy.calls != migrated.calls:
        site.status = "mismatch"
        step = min(legacy.calls, migrated.calls)
        site.first_divergence = {"step": step, "fetch": None, "problem": "different number of calls",
                                 "sequence": _sequence(legacy, step)}
    elif any(stats.compared for stats in site.fetches):
        site.status = "match"
    else:
        site.status = "advisory" if any(stats.advisory for stats in site.fetches) else "no-values"
