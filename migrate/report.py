"""The migration report as data, with renderers: JSON for machines, Markdown for people, and the short
text summary printed on stderr."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from migrate import __version__
from migrate.families import FAMILY_NAMES
from migrate.findings import FileResult

STATUSES = ("changed", "unchanged", "skipped", "failed")
LEVELS = ("tf2", "wrapped", "compat", "tf1", "none")


@dataclass(frozen=True)
class Report:
    command: str
    results: tuple[FileResult, ...]

    def totals(self) -> dict:
        statuses = Counter(r.status for r in self.results)
        levels = Counter(r.level for r in self.results)
        findings = [f for r in self.results for f in r.findings]
        return {
            "files": len(self.results),
            **{status: statuses[status] for status in STATUSES},
            "levels": {level: levels[level] for level in LEVELS},
            "findings": len(findings),
            "fixed": sum(f.fixed for f in findings),
            "needs_human": sum(not f.fixed for f in findings),
            "by_code": self.by_code(),
            "families": self.families(),
        }

    def families(self) -> dict[str, dict[str, int]]:
        """Per TF1 API family: files using it, and its sites that reached tf2 / compat / tf1."""
        merged: dict[str, dict[str, int]] = {}
        for result in self.results:
            for family, counts in result.families.items():
                entry = merged.setdefault(family, {"files": 0, "sites": 0, "tf2": 0, "compat": 0, "tf1": 0})
                entry["files"] += 1
                for key in ("sites", "tf2", "compat", "tf1"):
                    entry[key] += counts[key]
        return {family: merged[family] for family in FAMILY_NAMES if family in merged}

    def by_code(self) -> dict[str, dict[str, int]]:
        counts: dict[str, dict[str, int]] = {}
        for finding in (f for r in self.results for f in r.findings):
            entry = counts.setdefault(finding.code, {"fixed": 0, "needs_human": 0})
            entry["fixed" if finding.fixed else "needs_human"] += 1
        return dict(sorted(counts.items()))

    def to_dict(self) -> dict:
        return {"tool": "tf-migrate", "version": __version__, "command": self.command,
                "files": [r.to_dict() for r in self.results], "totals": self.totals()}


def render_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, sort_keys=False) + "\n"


def render_markdown(report: Report) -> str:
    totals = report.totals()
    lines = [f"# tf-migrate {report.command} report", "",
             "| files | changed | unchanged | skipped | failed | tf2 | wrapped | compat | tf1 | needs a human |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
             "| {files} | {changed} | {unchanged} | {skipped} | {failed} | {tf2} | {wrapped} | {compat} | {tf1} | "
             "{needs_human} |".format(**totals, **totals["levels"]), ""]
    lines += ["## Files", "", "| file | status | level | findings | note |", "|---|---|---|---:|---|"]
    for result in report.results:
        note = result.reason.replace("|", "\\|")
        lines.append(f"| `{result.path}` | {result.status} | {result.level} | {len(result.findings)} | {note} |")
    if totals["families"]:
        lines += ["", "## TF1 API families", "", "Sites are references to a family's TF1 symbols; tf2: gone "
                  "from the migrated code, compat: still reached through tf.compat.v1 (or tf-slim), tf1: not "
                  "in current TensorFlow.", "", "| family | files | sites | tf2 | compat | tf1 |",
                  "|---|---:|---:|---:|---:|---:|"]
        lines += [f"| {family} | {c['files']} | {c['sites']} | {c['tf2']} | {c['compat']} | {c['tf1']} |"
                  for family, c in totals["families"].items()]
    human = [(r.path, f) for r in report.results for f in r.findings if not f.fixed]
    if human:
        lines += ["", "## Still needs a human", "", "| where | code | message |", "|---|---|---|"]
        lines += [f"| `{path}:{f.line}:{f.col}` | {f.code} | {f.message.replace('|', chr(92) + '|')} |"
                  for path, f in human]
    return "\n".join(lines) + "\n"


def render_summary(report: Report) -> str:
    """One line for stderr, black-style."""
    t = report.totals()
    verb = "would change" if report.command == "diff" else "changed"
    parts = [f"{t['changed']} file(s) {verb}", f"{t['unchanged']} unchanged", f"{t['skipped']} skipped",
             f"{t['failed']} failed", f"levels: tf2 {t['levels']['tf2']}, wrapped {t['levels']['wrapped']}, "
             f"compat {t['levels']['compat']}, "
             f"tf1 {t['levels']['tf1']}", f"{t['needs_human']} finding(s) need a human"]
    return "tf-migrate: " + "; ".join(parts) + "."


def render_file_findings(result: FileResult) -> list[str]:
    """Per-file lines for stderr: the reason for skipped/failed files, then each finding."""
    lines = []
    if result.reason:
        lines.append(f"{result.path}: {result.status}: {result.reason}")
    for f in result.findings:
        mark = "fixed" if f.fixed else "NEEDS HUMAN"
        lines.append(f"{result.path}:{f.line}:{f.col}: {f.code} [{mark}] {f.message}")
    return lines


def write_report(report: Report, path: str) -> None:
    if path.endswith(".json"):
        text = render_json(report)
    elif path.endswith(".md"):
        text = render_markdown(report)
    else:
        raise ValueError(f"--report must end in .json or .md, got {path!r}")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
