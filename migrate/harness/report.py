"""The verify report: assembled once as a JSON-able dict (schema in SCHEMA.md), rendered as JSON,
Markdown, HTML (html_report.py) or the terminal summary table from that same dict."""
from __future__ import annotations

import datetime
import json
import math
import os

SCHEMA_VERSION = 1
VERDICTS = ("equivalent", "mismatch", "inconclusive", "failed", "error")
EXIT_EQUIVALENT, EXIT_NOT_EQUIVALENT, EXIT_HARNESS_ERROR = 0, 1, 2


def build_report(programs: list[dict], settings: dict) -> dict:
    counts = {verdict: sum(p["verdict"] == verdict for p in programs) for verdict in VERDICTS}
    unpaired = sum(site["status"] == "unpaired" for p in programs for site in p["sites"])
    return {"tool": "tf-migrate verify", "schema_version": SCHEMA_VERSION,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "settings": settings, "summary": dict(counts, programs=len(programs), exit_code=exit_code(counts),
                                                  unpaired_sites=unpaired),
            "programs": programs}


def exit_code(counts: dict) -> int:
    """0 all equivalent; 1 any mismatch, failure to run or inconclusive result; 2 harness errors only."""
    if counts["mismatch"] or counts["failed"] or counts["inconclusive"]:
        return EXIT_NOT_EQUIVALENT
    return EXIT_HARNESS_ERROR if counts["error"] else EXIT_EQUIVALENT


def jsonable(value):
    """The report with non-finite floats spelled as strings: strict JSON has no Infinity or NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    return value


def write_report(report: dict, path: str) -> None:
    """Write the report in the format its suffix names: .json, .md or .html."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".json":
        text = json.dumps(jsonable(report), indent=2, allow_nan=False)
    elif suffix in (".md", ".markdown"):
        text = render_markdown(report)
    elif suffix in (".html", ".htm"):
        from migrate.harness.html_report import render_html
        text = render_html(report)
    else:
        raise ValueError(f"unknown report format {suffix!r}: use .json, .md or .html")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


# -- shared formatting --------------------------------------------------------------------------------

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


def summary_table(report: dict) -> str:
    """The plain-text batch summary printed at the end of `tf-migrate verify`."""
    rows = [SUMMARY_HEADER] + summary_rows(report)
    widths = [max(len(row[i]) for row in rows) for i in range(len(SUMMARY_HEADER))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    summary = report["summary"]
    lines.append("")
    lines.append(", ".join(f"{summary[v]} {v}" for v in VERDICTS if summary[v]) + f" of {summary['programs']}"
                 + (f"; {summary['unpaired_sites']} run sites unpaired" if summary.get("unpaired_sites") else ""))
    return "\n".join(lines)


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


def render_markdown(report: dict) -> str:
    lines = ["# tf-migrate verify", "", settings_sentence(report), "", "## Summary", ""]
    lines += _md_table(SUMMARY_HEADER, summary_rows(report))
    for program in report["programs"]:
        lines += ["", f"## {program['name']}", "", f"**Verdict: {program['verdict']}** — {program['reason']}", ""]
        lines += [f"- {side_line(program, side)}" for side in ("legacy", "migrated")]
        timing = program.get("timing") or {}
        if timing.get("speedup") is not None:
            lines.append(f"- speedup {timing['speedup']:.2f}x ({timing['speedup_basis']})")
        if program["sites"]:
            lines += ["", "### Run sites", ""] + _md_table(SITE_HEADER, site_rows(program))
        if program["results"]:
            lines += ["", "### RESULT lines", ""] + _md_table(
                ["key", "legacy", "migrated", "status", "max abs"],
                [[r["key"], str(r["legacy"]), str(r["migrated"]), r["status"], number(r["max_abs"])]
                 for r in program["results"]])
        lines += ["", "### Notes", ""] + [f"- {note}" for note in program_notes(program)]
    return "\n".join(lines) + "\n"


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


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    def cell(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
