"""Reading what a side subprocess wrote: `result.json` (metadata) and `records.npz` (values)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

# A recorded leaf: an array, None (an op fetched for its effect) or OPAQUE (not an array at all).
OPAQUE = "opaque"


@dataclass
class SiteData:
    """One run site's calls as recorded by a side."""

    key: str
    calls: int
    paths: list
    fetch_names: list | None
    values: dict  # call index -> list of leaves
    last: list
    inputs: dict  # call index -> list of arrays
    starts: np.ndarray
    ends: np.ndarray
    sequence: np.ndarray
    facts: dict = field(default_factory=dict)
    pre: np.ndarray | None = None  # harness seconds before / after each call (see Recorder.record)
    post: np.ndarray | None = None

    def step_seconds(self, first: int) -> np.ndarray:
        """Seconds from the start of each call from `first` on to the start of the next, less the
        harness's own time in between (its bookkeeping after the one call and before the next)."""
        gaps = np.diff(np.asarray(self.starts[first:], dtype=np.float64))
        if self.pre is None or self.post is None or not len(gaps):
            return gaps
        return gaps - self.post[first:-1] - self.pre[first + 1:]

    @property
    def lines(self) -> list[int]:
        """The lines of a `line:N` / `line:N@module` site (several for sites merged by `merge_sites`)."""
        kind, _, rest = self.key.partition(":")
        return [int(part) for part in rest.partition("@")[0].split(",")] if kind == "line" else []

    @property
    def module(self) -> str | None:
        """The program module of a `line:N@module` site (its path from the script's folder); None for
        the script's own sites."""
        kind, _, rest = self.key.partition(":")
        return rest.partition("@")[2] or None if kind == "line" else None

    @property
    def line(self) -> int | None:
        return self.lines[0] if self.lines else None

    @property
    def function(self) -> str | None:
        kind, _, rest = self.key.partition(":")
        return rest if kind == "fn" else None

    def compared_positions(self) -> list[int]:
        """Positions of the fetched leaves that carry values (ops fetch None), in the first recorded
        call: the i-th compared fetch is leaf `compared_positions()[i]`."""
        return [position for position, leaf in enumerate(self.values[min(self.values)]) if leaf is not None]

    def has_values(self) -> bool:
        return any(leaf is not None for leaves in self.values.values() for leaf in leaves)


@dataclass
class SideData:
    """A side's result.json plus its sites, keyed by site key (`line:33`, `fn:train_step`)."""

    result: dict
    sites: dict

    @property
    def status(self) -> str:
        return self.result.get("status", "harness-error")


def merge_sites(sites: list[SiteData]) -> SiteData:
    """Several legacy sites answered by one migrated function, as one stream of calls in the order
    they ran (global call numbers), so that call k lines up with the function's call k."""
    if len(sites) == 1:
        return sites[0]
    order = sorted((int(seq), site, call) for site in sites for call, seq in enumerate(site.sequence))
    rank = {(id(site), call): merged for merged, (_, site, call) in enumerate(order)}
    values, inputs, deterministic = {}, {}, []
    for site in sites:
        values.update({rank[id(site), call]: leaves for call, leaves in site.values.items()})
        inputs.update({rank[id(site), call]: leaves for call, leaves in site.inputs.items()})
        deterministic += [rank[id(site), call] for call in site.facts.get("deterministic_calls", [])]
    latest = max(sites, key=lambda site: int(site.sequence[-1]) if site.calls else -1)
    facts = {"random_ops": sorted({op for site in sites for op in site.facts.get("random_ops", [])}),
             "mutates_state": any(site.facts.get("mutates_state") for site in sites),
             "fetched_racing": sorted({name for site in sites for name in site.facts.get("fetched_racing", [])}),
             "deterministic_calls": sorted(deterministic)}
    by_order = [(site, call) for _, site, call in order]
    return SiteData(
        key="line:" + ",".join(str(site.line) for site in sorted(sites, key=lambda site: site.line))
            + (f"@{sites[0].module}" if sites[0].module else ""),
        calls=len(order), paths=sites[0].paths, fetch_names=sites[0].fetch_names, values=values,
        last=latest.last, inputs=inputs,
        starts=np.asarray([site.starts[call] for site, call in by_order]),
        ends=np.asarray([site.ends[call] for site, call in by_order]),
        sequence=np.asarray([seq for seq, _, _ in order]), facts=facts,
        pre=_merged(by_order, "pre"), post=_merged(by_order, "post"))


def _merged(by_order, name: str) -> np.ndarray | None:
    if any(getattr(site, name) is None for site, _ in by_order):
        return None
    return np.asarray([getattr(site, name)[call] for site, call in by_order])


def load_side(out_dir: str) -> SideData | None:
    """Read a side's output folder; None when the side wrote no result (it died or was killed)."""
    result_path = os.path.join(out_dir, "result.json")
    if not os.path.exists(result_path):
        return None
    with open(result_path) as handle:
        result = json.load(handle)
    records_path = os.path.join(out_dir, "records.npz")
    sites = {}
    if result.get("sites") and os.path.exists(records_path):
        with np.load(records_path, allow_pickle=False) as arrays:
            for described in result["sites"]:
                sites[described["key"]] = _site(described, arrays)
    return SideData(result, sites)


def _site(described: dict, arrays) -> SiteData:
    prefix = f"s{described['index']}"
    values = {call: _leaves(arrays, f"{prefix}_c{call}", kinds)
              for call, kinds in zip(described["recorded_calls"], described["leaf_kinds"])}
    inputs = {call: [arrays[f"{prefix}_i{call}_l{k}"] for k in range(count)
                     if f"{prefix}_i{call}_l{k}" in arrays]
              for call, count in zip(described["input_calls"], described["input_counts"])}
    return SiteData(
        key=described["key"], calls=described["calls"], paths=described["paths"],
        fetch_names=described.get("fetch_names"), values=values,
        last=_leaves(arrays, f"{prefix}_last", described["last_kinds"]), inputs=inputs,
        starts=arrays[f"{prefix}_start"], ends=arrays[f"{prefix}_end"], sequence=arrays[f"{prefix}_seq"],
        facts=described.get("facts") or {}, pre=arrays.get(f"{prefix}_pre"), post=arrays.get(f"{prefix}_post"))


def _leaves(arrays, prefix: str, kinds: list) -> list:
    leaves = []
    for index, kind in enumerate(kinds):
        if kind == "array":
            leaves.append(arrays[f"{prefix}_l{index}"])
        else:
            leaves.append(None if kind == "none" else OPAQUE)
    return leaves
