"""Turning two finished side runs into a program report: pairing, comparison, timing, verdict."""
from __future__ import annotations

import os
from dataclasses import dataclass

from migrate.harness.compare import compare_site
from migrate.harness import final_weights
from migrate.harness import outcomes
from migrate.harness.launcher import SideRun
from migrate.harness.pairing import merge_doubt, module_line_maps, pair_sites
from migrate.harness.programs import Prepared, Program
from migrate.harness.records import SiteData, merge_sites
from migrate.harness.ordering import find_races, reads_per_fetch
from migrate.harness.randomness import advisory_from, find_taint, randomness_reproduced
from migrate.harness.result_lines import compare_results, parse_results
from migrate.harness.timing import side_timing, speedup
from migrate.harness.tolerance import Tolerance


SITE_STATUSES = ("match", "mismatch", "advisory", "unpaired", "no-values")


def empty_report(program: Program) -> dict:
    return {"name": program.name, "legacy_path": program.legacy, "migrated_path": program.migrated,
            "migrated_by": "user" if program.migrated else "tf-migrate", "migration": None,
            "verdict": None, "reason": "", "sides": {}, "sites": [], "unpaired_migrated": [],
            "results": [], "final_weights": None, "tests": [], "site_counts": None, "working_directory": None, "alignment": None, "randomness": None, "timing": None, "notes": []}


def stop(report: dict, verdict: str, reason: str) -> dict:
    report["verdict"], report["reason"] = verdict, reason
    return report


def failure_verdict(run: SideRun) -> str:
    """A side that could not start or found no GPU is the harness's problem, not the program's."""
    return "error" if run.status in ("harness-error", "no-device") else "failed"


def failure_reason(side: str, run: SideRun) -> str:
    """One line: which side stopped and its error's last line (the full text is in the side summary)."""
    lines = [line.strip() for line in (run.error or "").splitlines() if line.strip()]
    return f"{side} program {run.status}: {lines[-1] if lines else 'no error message'}"


def side_summary(run: SideRun) -> dict:
    result = run.data.result if run.data else {}
    return {"status": run.status, "exit_code": run.exit_code, "error": run.error,
            "seconds": round(run.seconds, 3), "runtime": result.get("runtime"),
            "peak_host_mb": result.get("peak_host_mb") or run.observed_peak_mb or None,
            "gpu": result.get("gpu"), "versions": result.get("versions"),
            "stderr_tail": run.stderr_tail if run.status != "ok" else ""}


def compare_runs(report: dict, prepared: Prepared, legacy: SideRun, migrated: SideRun,
                 tolerance: Tolerance) -> dict:
    """Fill in comparisons, alignment, randomness and timing, then the verdict."""
    tolerance = _tolerance_for_precision(report, tolerance, migrated.data.result.get("precision_policy"))
    legacy_sites = {key: site for key, site in legacy.data.sites.items() if key.startswith("line:")}
    migrated_sites = migrated.data.sites
    modules = _module_line_maps(report, prepared, legacy_sites)
    pairs = pair_sites(legacy_sites, migrated_sites, prepared.site_map, prepared.lines, prepared.rewritten, modules)
    taint = find_taint(legacy_sites, legacy.data.result.get("capture_sequence"))
    races = find_races(legacy_sites)
    training = tuple(sorted(int(number) for site in legacy_sites.values() if site.facts.get("mutates_state")
                            for number in site.sequence))
    report["randomness"] = taint.to_dict()
    report["ordering"] = races.to_dict()
    printed_at = legacy.data.result.get("result_printed_at") or {}

    def after_taint(key: str) -> bool:
        return taint.taint_sequence is not None and printed_at.get(key, float("inf")) > taint.taint_sequence

    def after_race(key: str) -> bool:
        """A RESULT line names no variables: once a run raced, any may hold a scheduling-dependent value."""
        return races.first_race is not None and printed_at.get(key, float("inf")) > races.first_race

    streams = _streams(pairs, legacy_sites, migrated_sites)
    judged = Judged(streams, tolerance, taint, training, races)
    sites = judged.sites(reproduced=False)
    results = compare_results(parse_results(legacy.stdout), parse_results(migrated.stdout), tolerance,
                              lambda key: after_taint(key) or after_race(key))
    weighing = _final_weighing(legacy, migrated, tolerance, training, races.unsettled, sites)
    weights = weighing(randomness_advisory=taint.taint_sequence is not None)
    if randomness_reproduced(sites, results, weights[0]):
        sites = judged.sites(reproduced=True)
        results = compare_results(parse_results(legacy.stdout), parse_results(migrated.stdout), tolerance,
                                  after_race)
        weights = weighing(randomness_advisory=False)
        report["randomness"].update(reproduced=True, note=REPRODUCED_NOTE)
    report["sites"] = [site.to_dict() for site in sites]
    paired = {pair.migrated_key for pair in pairs}
    report["unpaired_migrated"] = sorted(key for key in migrated_sites if key not in paired)
    report["results"] = [item.to_dict() for item in results]
    report["final_weights"] = final_weights.summary(*weights)
    report["tests"] = [item.to_dict() for item in outcomes.compare_tests(
        legacy.data.result.get("tests"), migrated.data.result.get("tests"))]
    report["notes"] += outcomes.notes(report["tests"])
    report["site_counts"] = _site_counts(report["sites"])
    report["alignment"] = _alignment(legacy, migrated)
    report["timing"] = _timing([(stream.site, stream.counterpart) for stream in streams], legacy, migrated)
    return _verdict(report)


REPRODUCED_NOTE = ("every value computed through random ops agreed on both sides at every step (the random "
                   "streams were aligned, or the randomness did not change them): they are compared strictly")


@dataclass
class Stream:
    """Legacy run sites answered by one migrated site (or by none), compared as one stream."""

    members: list  # SitePair
    site: SiteData  # the members' legacy sites merged
    counterpart: SiteData | None
    doubt: str | None  # why the pairing is uncertain
    reads: dict  # fetch index -> variables its value is computed from (ordering.py)


def _streams(pairs, legacy_sites: dict, migrated_sites: dict) -> list[Stream]:
    streams = []
    for members in _by_counterpart(pairs):
        key = members[0].migrated_key
        parts = [legacy_sites[pair.legacy_key] for pair in members]
        doubt = next((pair.doubt for pair in members if pair.doubt), None) or merge_doubt(parts)
        streams.append(Stream(members, merge_sites(parts), migrated_sites.get(key) if key else None, doubt,
                              reads_per_fetch(parts[0])))
    return streams


@dataclass
class Judged:
    """What the comparison of each stream needs besides the stream."""

    streams: list
    tolerance: Tolerance
    taint: object
    training: tuple
    races: object

    def sites(self, reproduced: bool) -> list:
        return [self.compare(stream, reproduced) for stream in self.streams]

    def compare(self, stream: Stream, reproduced: bool):
        first = stream.members[0]
        how = first.how + (" (several legacy sites, one function)" if len(stream.members) > 1 else "")
        advisory = None if reproduced else advisory_from(stream.site, self.taint)
        compared = compare_site(stream.site, stream.counterpart, how, self.tolerance, advisory, self.training,
                                stream.doubt, self.races.limits(stream.site, stream.reads), reproduced)
        key = first.migrated_key
        if key and stream.counterpart is None:
            compared.notes.append(f"the migrated program never called {key.partition(':')[2]}")
        return compared


def _final_weighing(legacy: SideRun, migrated: SideRun, tolerance: Tolerance, training: tuple, unsettled: dict,
                    sites: list):
    """The final-weights comparison of the two runs, as a function of whether unreproduced
    randomness makes it advisory: (comparisons, note why none were made)."""
    result = legacy.data.result
    final_sequence = result.get("final_sequence")
    given = final_weights.FinalWeightsInput(
        final_weights.load(legacy.out_dir), final_weights.load(migrated.out_dir), result.get("variables") or [],
        result.get("sessions_run") or 0,
        training_calls=sum(1 for number in training if final_sequence is None or number < final_sequence),
        call_counts_agree=all(site.legacy_calls == site.migrated_calls for site in sites if site.migrated is not None))
    policy = migrated.data.result.get("precision_policy")
    mixed = policy if policy and policy.startswith("mixed") else None
    return lambda randomness_advisory: final_weights.compare_final_weights(given, tolerance, randomness_advisory,
                                                                           unsettled, mixed)


def _module_line_maps(report: dict, prepared: Prepared, legacy_sites: dict) -> dict:
    """Line maps of the program modules holding legacy run sites (none for a one-file program)."""
    modules = [site.module for site in legacy_sites.values() if site.module]
    if not modules:
        return {}
    return module_line_maps(os.path.dirname(report["legacy_path"]),
                            os.path.dirname(prepared.file_as or prepared.migrated), modules)


def _site_counts(sites: list[dict]) -> dict:
    """How many legacy run sites ended in each status (unpaired ones are not comparisons)."""
    return {status: sum(site["status"] == status for site in sites) for status in SITE_STATUSES}


def _by_counterpart(pairs) -> list[list]:
    """Pairs grouped by migrated site: legacy sites sharing one function are compared as one stream."""
    groups = {}
    for pair in pairs:
        group = ("migrated", pair.migrated_key) if pair.migrated_key else ("legacy", pair.legacy_key)
        groups.setdefault(group, []).append(pair)
    return list(groups.values())


def _alignment(legacy: SideRun, migrated: SideRun) -> dict:
    found = dict(migrated.data.result.get("alignment") or {})
    found["captured"] = legacy.data.result.get("variables") is not None
    found["capture_note"] = legacy.data.result.get("capture_note")
    return found


def _timing(streams, legacy: SideRun, migrated: SideRun) -> dict:
    """Both sides' timing at the step site and the speedup. The step site is the legacy stream called
    most often: a legacy site, or several answered by one migrated function (a loop split around a
    checkpoint, say), timed as one stream as its counterpart is."""
    step_site, migrated_site = max(streams, key=lambda stream: stream[0].calls, default=(None, None))
    legacy_timing = side_timing(step_site, legacy.data.result.get("wall_s"),
                                legacy.data.result.get("instrumentation_s"))
    migrated_timing = side_timing(migrated_site, migrated.data.result.get("wall_s"),
                                  migrated.data.result.get("instrumentation_s"))
    ratio, basis = speedup(legacy_timing, migrated_timing)
    return {"legacy": legacy_timing.to_dict(), "migrated": migrated_timing.to_dict(),
            "speedup": ratio, "speedup_basis": basis}


def _tolerance_for_precision(report: dict, tolerance: Tolerance, policy: str | None) -> Tolerance:
    """A migrated side in mixed precision is judged with wider tolerances, and the report says so."""
    widened = tolerance.for_policy(policy)
    report["precision_policy"] = policy
    if widened != tolerance:
        report["tolerance"] = widened.to_dict()
        report.setdefault("notes", []).append(
            f"the migrated program ran in mixed precision ({policy}): tolerances widened to atol "
            f"{widened.atol:g}, rtol {widened.early_rtol:g} for the first {widened.early_steps} steps and "
            f"{widened.rtol:g} afterwards")
    return widened


def _verdict(report: dict) -> dict:
    sites, results = report["sites"], report["results"]
    _note_alignment(report)
    mismatched = [site for site in sites if site["status"] == "mismatch"]
    bad_results = [item for item in results if item["status"] in ("mismatch", "missing")]
    weights = report.get("final_weights") or {}
    tests = report.get("tests") or []
    bad_tests = [item for item in tests if item["status"] == "mismatch"]
    if mismatched or bad_results:
        return stop(report, "mismatch", _mismatch_reason(mismatched, bad_results))
    if bad_tests:
        return stop(report, "mismatch", outcomes.mismatch_reason(bad_tests))
    if weights.get("mismatched"):
        return stop(report, "mismatch", _final_weights_reason(weights))
    strict = sum(site["status"] == "match" for site in sites) + sum(item["status"] == "match" for item in results)
    if not strict and not tests and not weights.get("compared"):
        return stop(report, "inconclusive", "nothing could be compared strictly (no paired run site with "
                                            "values, no RESULT line, no test, no final weight, or only "
                                            "randomness-affected values)" + _race_note(report))
    unpaired = [site for site in sites if site["status"] == "unpaired"]
    agreeing = [f"{strict} run sites / RESULT lines agree within tolerance" if strict else "",
                f"{weights['compared']} trained variables agree at the end" if weights.get("compared") else "",
                f"{len(tests)} tests have the same outcomes" if tests else "",
                f"{len(unpaired)} run sites unpaired (not compared)" if unpaired else ""]
    return stop(report, "equivalent", "; ".join(part for part in agreeing if part))


def _race_note(report: dict) -> str:
    ordering = report.get("ordering") or {}
    races, fetched = ordering.get("racing_variables") or [], ordering.get("fetched_racing") or []
    note = ""
    if races:
        note += (f"; TF1 ran the writes to {_count_variables(races)}{_where(races)} in no fixed order, so what "
                 "is computed from them differs between runs of the legacy program itself")
    if fetched:
        note += (f"; the run{_where(fetched)} fetches {_count_variables(fetched)} beside its own update, which TF1 "
                 "reads before or after the update as its scheduling falls")
    return note


def _count_variables(races: list) -> str:
    return f"{len(races)} variable{'s' if len(races) > 1 else ''}"


def _where(races: list) -> str:
    lines = sorted({race["line"] for race in races if race["line"] is not None})
    return f" at line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}" if lines else ""


def _mismatch_reason(mismatched: list, bad_results: list) -> str:
    if mismatched:
        first = min(mismatched, key=_divergence_order)
        divergence = first["first_divergence"] or {}
        fetch = f"fetch {divergence['name']!s} " if divergence.get("name") else ""
        problem = f" ({divergence['problem']})" if divergence.get("problem") else ""
        return (f"line {first['legacy_line']} -> {first['migrated']}: {fetch}diverges at step "
                f"{divergence.get('step')}{problem} (first divergence in execution order)")
    item = bad_results[0]
    return f"RESULT {item['key']}: legacy {item['legacy']!r}, migrated {item['migrated']!r}"


def _final_weights_reason(weights: dict) -> str:
    first = next(item for item in weights["variables"] if item["status"] == "mismatch")
    count = len(weights["mismatched"])
    return (f"final weights: {first['variable']} differs after training (max abs {first['max_abs']:.3g}"
            f"{', ' + first['problem'] if first['problem'] else ''})"
            + (f", and {count - 1} other variables" if count > 1 else ""))


def _divergence_order(site: dict) -> tuple:
    """Sort key: the legacy program's call number of the site's first divergence (execution order)."""
    divergence = site["first_divergence"] or {}
    sequence = divergence.get("sequence")
    return (sequence if sequence is not None else float("inf"), site["legacy_line"] or 0)


def _note_alignment(report: dict) -> None:
    alignment = report["alignment"] or {}
    if not alignment.get("captured"):
        report["notes"].append("initial weights were not captured: " + str(alignment.get("capture_note")))
    for item in alignment.get("unaligned_migrated", []):
        if item.get("trainable"):
            report["notes"].append(f"trainable variable {item['migrated']} not aligned: {item['reason']}")
    for item in alignment.get("unused_legacy", []):
        if item.get("trainable"):
            report["notes"].append(f"legacy trainable variable {item['legacy']} has no migrated counterpart")
    for error in alignment.get("errors", []):
        report["notes"].append(f"alignment error: {error}")
