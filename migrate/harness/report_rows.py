"""The rows and sentences every rendering of the verify report shares (the terminal table and
Markdown in report.py, HTML in html_report.py), computed from the report dict."""
from __future__ import annotations

import math


def number(value, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if not math.isfinite(value):
        return str(value)
    return f"{value:.{digits}g}"


def max_error(program: dict) -> float | None:
    """Largest absolute error over the strictly compared calls of every fetch of every site."""
    errors = [fetch["max_abs"] for site in program["sites"] for fetch in site["fetches"] if fetch["compared"]]
    return max(errors) if errors else None


def summary_rows(report: dict) -> list[list[str]]:
    """One row per program: name, verdict, matched sites, max error, steps/s both sides, speedup."""
    rows = []
    for program in report["programs"]:
        timing = program.get("timing") or {}
        sites = program["sites"]
        matched = sum(site["status"] == "match" for site in sites)
        compared = sum(site["status"] in ("match", "mismatch") for site in sites)
        speed = timing.get("speedup")
        unpaired = sum(site["status"] == "unpaired" for site in sites)
        rows.append([program["name"], program["verdict"], f"{matched}/{compared}", str(unpaired),
                     number(max_error(program)),
                     number((timing.get("legacy") or {}).get("steps_per_s")),
                     number((timing.get("migrated") or {}).get("steps_per_s")),
                     "-" if speed is None else f"{speed:.2f}x"])
    return rows


SUMMARY_HEADER = ["program", "verdict", "sites ok", "unpaired", "max abs err", "legacy steps/s", "migrated steps/s",
                  "speedup"]


def site_rows(program: dict) -> list[list[str]]:
    rows = []
    for site in program["sites"]:
        divergence = site.get("first_divergence") or {}
        where = "-"
        if divergence:
            name = f" {divergence['name']}" if divergence.get("name") else ""
            problem = f": {divergence['problem']}" if divergence.get("problem") else ""
            where = f"step {divergence.get('step')}{name}{problem}"
        fetches = [fetch for fetch in site["fetches"] if fetch["compared"]]
        lines = ", ".join(str(line) for line in site.get("legacy_lines") or [site["legacy_line"]])
        if site.get("legacy_module"):
            lines = f"{site['legacy_module']}:{lines}"
        rows.append([lines, (site["migrated"] or "-"), site["paired_by"],
                     f"{site['legacy_calls']}/{site['migrated_calls']}", site["status"],
                     number(max((f["max_abs"] for f in fetches), default=None)),
                     number(max((f["max_rel"] for f in fetches), default=None)), where])
    return rows


SITE_HEADER = ["legacy line", "migrated", "paired by", "calls L/M", "status", "max abs", "max rel",
               "first divergence"]


def side_line(program: dict, side: str) -> str:
    """A sentence on one side: runtime, versions, speed, memory, device."""
    summary = program["sides"].get(side)
    if not summary:
        return f"{side}: not run"
    timing = (program.get("timing") or {}).get(side) or {}
    versions = summary.get("versions") or {}
    gpu = summary.get("gpu")
    device = f"GPU {gpu['device_name']} (peak {number(gpu.get('peak_mb'))} MiB)" if gpu else "CPU"
    return (f"{side}: {summary['status']}; TensorFlow {versions.get('tensorflow', '?')}, "
            f"{versions.get('keras') or 'no Keras'}, Python {versions.get('python', '?')}; "
            f"{summary.get('runtime') or ''}; wall {number(timing.get('wall_s'))} s; "
            f"{number(timing.get('steps_per_s'))} steps/s at {timing.get('step_site') or '-'} "
            f"({timing.get('warmup_steps', 0)} warm-up steps excluded); "
            f"peak host memory {number(summary.get('peak_host_mb'))} MiB; {device}")


def program_notes(program: dict) -> list[str]:
    """Alignment, randomness, input and per-site notes worth a reader's attention."""
    notes = list(program["notes"])
    alignment = program.get("alignment") or {}
    if alignment.get("pairs") is not None:
        hows = {}
        for pair in alignment["pairs"]:
            hows[pair["how"]] = hows.get(pair["how"], 0) + 1
        described = ", ".join(f"{count} by {how}" for how, count in sorted(hows.items())) or "none"
        notes.append(f"weights aligned: {described}; {len(alignment.get('unaligned_migrated', []))} migrated "
                     f"variables keep their own initial value")
    randomness = program.get("randomness")
    if randomness:
        notes.append("randomness: " + randomness["note"])
    for site in program["sites"]:
        notes += [f"line {site['legacy_line']}: {note}" for note in site["notes"]]
        if site["inputs"] != "not recorded":
            notes.append(f"line {site['legacy_line']}: inputs {site['inputs']}")
    if program.get("unpaired_migrated"):
        notes.append("migrated run sites with no legacy counterpart: " + ", ".join(program["unpaired_migrated"]))
    return notes or ["none"]


def settings_sentence(report: dict) -> str:
    settings = report["settings"]
    tolerance = settings["tolerance"]
    return (f"Created {report['created']}. Tolerance: atol {tolerance['atol']:g} for the first "
            f"{tolerance['early_steps']} steps of each run site, rtol {tolerance['rtol']:g} afterwards; "
            f"values of the first {settings['steps']} calls per site compared, plus the last; "
            f"device {settings['device']}.")
