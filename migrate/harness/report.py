"""The verify report: assembled once as a JSON-able dict (schema in SCHEMA.md), rendered as JSON,
Markdown, HTML (html_report.py) or the terminal summary table from that same dict."""
from __future__ import annotations

import datetime
import json
import math
import os

from migrate.harness.html_report import render_html
from migrate.harness.report_rows import (SITE_HEADER, SUMMARY_HEADER, number, program_notes, settings_sentence,
                                         side_line, site_rows, summary_rows)

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
        text = render_html(report)
    else:
        raise ValueError(f"unknown report format {suffix!r}: use .json, .md or .html")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


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


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    def cell(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
