"""Where TF1's unordered writes make comparisons advisory.

One `Session.run` of a TF1 program may update a variable twice with no order between the updates
(an optimizer step fetched with a clipping assignment of the same weights, two optimizers over shared
variables) or fetch a variable beside its own update. TF1 runs such ops in whichever order its
executor picks, so the legacy program itself computes different values from run to run; a migrated
program (or the same graph on another run) may pick the other order. The legacy side lists, per run
site, the racing variables, what each fetched value is computed from and what each written variable's
new value is computed from (graph_facts.py). Here a variable is *unsettled* from the first call that
races on it, and so is every variable later written from an unsettled one; a fetched value computed
from an unsettled variable is compared as advisory from that call on, with the reason. Values that
never read one stay strict: a GAN whose two discriminator passes race only on batch-norm moving
averages still has its training losses compared exactly.

A variable fetched beside its own update (`sess.run([train_op, global_step])`) unsettles nothing: the
update is ordered, only the fetched read may come before or after it. What that site fetches from the
variable is advisory; the variable's value, and everything later computed from it, stays strict. So
is a fetched value that reads a variable the run updates through ops the update does not wait for (a
summary of the weights fetched with their train op): that value is advisory. RESULT lines name no
values, so every race, these included, makes the lines printed after it advisory (judge.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from migrate.harness.records import SiteData


@dataclass(frozen=True)
class OrderFinding:
    #: variable -> the legacy program's global call number from which its value depends on scheduling
    unsettled: dict
    #: variable -> (line, module) of the run that raced on it first (None for a variable unsettled by
    #: a write from another unsettled one)
    raced_at: dict
    #: variable -> (line, module) of the first run that fetched it beside its own update
    fetched_at: dict
    #: the legacy program's global call number of the first race of either kind (None: no race)
    first_race: int | None

    def to_dict(self) -> dict:
        return {"racing_variables": _located(self.raced_at), "fetched_racing": _located(self.fetched_at),
                "unsettled_variables": len(self.unsettled)}

    def limits(self, site: SiteData, reads_per_fetch: list) -> dict[int, tuple[int, str]]:
        """fetch index -> (first call index compared as advisory, variable) for the fetched values
        computed from an unsettled variable, or from one this site fetches beside its update."""
        fetched_racing = set(site.facts.get("fetched_racing", ()))
        racing_reads = _per_fetch(site, "racing_reads")
        limits = {}
        for index, reads in enumerate(reads_per_fetch):
            touched = [(int(np.searchsorted(site.sequence, self.unsettled[name], side="left")), name)
                       for name in reads if name in self.unsettled]
            touched += [(0, name) for name in reads if name in fetched_racing]
            touched += [(0, name) for name in (racing_reads[index] if index < len(racing_reads) else ())]
            if touched:
                limits[index] = min(touched)
        return limits


def _located(where: dict) -> list[dict]:
    return [{"variable": variable, "line": line, "module": module}
            for variable, (line, module) in sorted(where.items())]


def find_races(legacy_sites: dict) -> OrderFinding:
    """Replay the legacy calls in order: which variables became unsettled, and from which call."""
    calls = sorted((int(sequence), key) for key, site in legacy_sites.items() for sequence in site.sequence)
    unsettled, raced_at, fetched_at, first_race = {}, {}, {}, None
    for sequence, key in calls:
        site = legacy_sites[key]
        for variable in site.facts.get("racing_variables", ()):
            if variable not in unsettled:
                unsettled[variable] = sequence
                raced_at[variable] = (site.line, site.module)
        read_beside = [variable for reads in site.facts.get("racing_reads") or () for variable in reads]
        for variable in [*site.facts.get("fetched_racing", ()), *read_beside]:
            fetched_at.setdefault(variable, (site.line, site.module))
        if first_race is None and (site.facts.get("racing_variables") or site.facts.get("fetched_racing")
                                   or read_beside):
            first_race = sequence
        if unsettled:
            for variable, reads in site.facts.get("write_reads", {}).items():
                if variable not in unsettled and not unsettled.keys().isdisjoint(reads):
                    unsettled[variable] = sequence
    return OrderFinding(unsettled, raced_at, fetched_at, first_race)


def reads_per_fetch(site: SiteData) -> list:
    """The variables each compared fetch (the non-None leaves, in order) is computed from."""
    return _per_fetch(site, "leaf_reads")


def _per_fetch(site: SiteData, fact: str) -> list:
    """A per-leaf fact of the site (graph_facts.py) for each compared fetch, in order."""
    per_leaf = site.facts.get(fact)
    if not per_leaf or not site.values:
        return []
    return [per_leaf[position] if position < len(per_leaf) else [] for position in site.compared_positions()]
