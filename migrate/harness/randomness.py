"""Where unaligned randomness makes comparisons advisory.

Initial weights are aligned by copying them, but stateful random ops running during training
(dropout, random augmentation, noise) draw different numbers in the two runtimes. The legacy side
notes, for each run site, the random op types its fetched computation reaches and whether it writes
variables, and probes whether a call's values really depend on them (graph_facts.py). Once a call
that writes state through randomness that matters (or that no probe cleared) has run after the
weights were captured, the two programs' states differ for reasons other than the migration, so
every later comparison is advisory.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from migrate.harness.final_weights import RANDOMNESS_REASON
from migrate.harness.records import SiteData


@dataclass(frozen=True)
class RandomnessFinding:
    taint_sequence: int | None  # global call number of the first state-changing random call
    site_line: int | None
    op_types: tuple

    def to_dict(self) -> dict:
        if self.taint_sequence is None:
            return {"aligned": True, "note": "no random op changes the state after the weights are aligned"}
        return {"aligned": False, "site_line": self.site_line, "random_ops": list(self.op_types),
                "note": (f"the run at line {self.site_line} changes variables through random ops "
                         f"({', '.join(self.op_types)}) that a re-run did not prove inactive; comparisons "
                         "after that call are advisory")}


def find_taint(legacy_sites: dict, capture_sequence: int | None) -> RandomnessFinding:
    """The first call, after the weights were captured, that applied random ops while writing state
    and that the legacy side's probe did not prove deterministic."""
    start = capture_sequence or 0
    first = None
    for site in legacy_sites.values():
        if not (site.facts.get("random_ops") and site.facts.get("mutates_state")):
            continue
        proven = set(site.facts.get("deterministic_calls", []))
        unproven = [int(seq) for call, seq in enumerate(site.sequence) if seq >= start and call not in proven]
        if unproven and (first is None or unproven[0] < first[0]):
            first = (unproven[0], site)
    if first is None:
        return RandomnessFinding(None, None, ())
    sequence, site = first
    return RandomnessFinding(sequence, site.line, tuple(site.facts["random_ops"]))


def advisory_from(site: SiteData, finding: RandomnessFinding) -> int | None:
    """The first call index of `site` that ran after the taint (None: all calls are strict)."""
    if finding.taint_sequence is None:
        return None
    return int(np.searchsorted(site.sequence, finding.taint_sequence, side="right"))


def randomness_reproduced(sites: list, results: list, weights: list = ()) -> bool:
    """Whether the program's randomness was reproduced: some comparison was advisory through
    randomness alone, and every such comparison (site fetches, RESULT lines and final weights)
    agreed. Agreement at every step is evidence whatever made it possible (streams aligned, or
    randomness that did not matter); a single disagreement leaves them all advisory, as it may be
    randomness or the migration. A coarse value (an accuracy) can agree while the weights trained
    through other random draws do not: the final weights, where compared, keep such a claim honest."""
    fetches = [stats for site in sites for stats in site.fetches if stats.random_advisory]
    advisory_results = [item for item in results if item.status.startswith("advisory-")]
    random_weights = [item for item in weights if item.advisory_reason == RANDOMNESS_REASON]
    if not fetches and not advisory_results and not random_weights:
        return False
    return (not any(stats.random_failures for stats in fetches)
            and all(item.status == "advisory-match" for item in advisory_results + random_weights))
