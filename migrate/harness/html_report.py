"""The verify report as one self-contained HTML file: summary table, a chart of per-program speedups
(matplotlib PNG embedded as a data: URI, so the file travels alone), and per-program details."""
from __future__ import annotations

import base64
import html
import io

from migrate.harness.report_rows import (SITE_HEADER, SUMMARY_HEADER, number, program_notes, settings_sentence,
                                         side_line, site_rows, summary_rows)

VERDICT_COLOURS = {"equivalent": "#2e7d32", "mismatch": "#c62828", "inconclusive": "#ef6c00",
                   "failed": "#6a1b9a", "error": "#455a64"}

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; font-size: 0.9em; }
th { background: #f3f3f3; }
.verdict { font-weight: bold; color: white; padding: 0.1em 0.5em; border-radius: 3px; }
section { border-top: 2px solid #ddd; margin-top: 2em; }
img.chart { max-width: 100%; border: 1px solid #ddd; }
"""


def render_html(report: dict) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             "<title>tf-migrate verify</title>", f"<style>{STYLE}</style>", "</head>", "<body>",
             "<h1>tf-migrate verify</h1>", f"<p>{_e(settings_sentence(report))}</p>",
             "<h2>Summary</h2>", _table(SUMMARY_HEADER, summary_rows(report), verdict_column=1),
             _chart(report)]
    for program in report["programs"]:
        parts.append(_program_section(program))
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def _program_section(program: dict) -> str:
    parts = [f"<section><h2>{_e(program['name'])}</h2>",
             f"<p>{_badge(program['verdict'])} {_e(program['reason'])}</p>", "<ul>"]
    parts += [f"<li>{_e(side_line(program, side))}</li>" for side in ("legacy", "migrated")]
    timing = program.get("timing") or {}
    if timing.get("speedup") is not None:
        parts.append(f"<li>speedup {timing['speedup']:.2f}x ({_e(timing['speedup_basis'])})</li>")
    parts.append("</ul>")
    if program["sites"]:
        parts += ["<h3>Run sites</h3>", _table(SITE_HEADER, site_rows(program), verdict_column=None)]
    if program["results"]:
        rows = [[r["key"], str(r["legacy"]), str(r["migrated"]), r["status"], number(r["max_abs"])]
                for r in program["results"]]
        parts += ["<h3>RESULT lines</h3>", _table(["key", "legacy", "migrated", "status", "max abs"], rows)]
    parts += ["<h3>Notes</h3>", "<ul>"] + [f"<li>{_e(note)}</li>" for note in program_notes(program)]
    parts.append("</ul></section>")
    return "\n".join(parts)


def _chart(report: dict) -> str:
    """A bar chart of speedups (legacy time / migrated time), embedded as base64 PNG."""
    measured = [p for p in report["programs"] if (p.get("timing") or {}).get("speedup") is not None]
    if not measured:
        return "<p>No program was timed on both sides, so there is no speedup chart.</p>"
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        return "<p>matplotlib is not installed: no speedup chart.</p>"
    figure, axes = pyplot.subplots(figsize=(max(5.5, 1.5 + 0.9 * len(measured)), 3.4), dpi=100)
    names = [p["name"] for p in measured]
    values = [p["timing"]["speedup"] for p in measured]
    axes.bar(range(len(values)), values, color=[VERDICT_COLOURS.get(p["verdict"], "#777") for p in measured])
    axes.axhline(1.0, color="#555", linewidth=0.8, linestyle="--")
    axes.set_xticks(range(len(values)), names, rotation=30, ha="right", fontsize=8)
    axes.set_ylabel("speedup (legacy / migrated time)")
    axes.set_title("Speedup per program (colour: verdict)", fontsize=10)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    pyplot.close(figure)
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (f'<img class="chart" alt="per-program speedup chart" '
            f'src="data:image/png;base64,{encoded}">')


def _table(header, rows, verdict_column=None) -> str:
    head = "<tr>" + "".join(f"<th>{_e(cell)}</th>" for cell in header) + "</tr>"
    body = []
    for row in rows:
        cells = [_badge(cell) if index == verdict_column else _e(cell) for index, cell in enumerate(row)]
        body.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    return "<table>\n" + head + "\n" + "\n".join(body) + "\n</table>"


def _badge(verdict: str) -> str:
    colour = VERDICT_COLOURS.get(verdict, "#777")
    return f'<span class="verdict" style="background:{colour}">{_e(verdict)}</span>'


def _e(text) -> str:
    return html.escape(str(text), quote=True)
